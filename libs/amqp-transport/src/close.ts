import type { Writable } from 'node:stream';
import type { ChannelModel } from 'amqplib';
import type { WireChannel } from './contract';

/**
 * amqplib's `close()` of a channel or a connection settles only when the
 * broker answers CloseOk: if the connection dies (or stalls) during the
 * close handshake, the promise never settles. These settle on whichever
 * comes first: the answer, the 'close' event, or `timeoutMs`. They never
 * reject.
 */
export async function closeChannel(channel: Pick<WireChannel, 'close' | 'once' | 'off'>, timeoutMs = 2000): Promise<void> {
  await settleFirst(channel.close(), channel, timeoutMs);
}

/** Closes a connection, bounded as {@link closeChannel}, then destroys its socket so nothing lingers half-open. */
export async function closeModel(model: ChannelModel, timeoutMs = 2000): Promise<void> {
  await settleFirst(model.close(), model, timeoutMs);
  destroySocket(model);
}

/** Destroys the socket under a connection amqplib has given up on (it only ends it, which a stalled peer never acknowledges). */
export function destroySocket(model: ChannelModel): void {
  (model as ChannelModel & { connection: { stream?: Writable } }).connection.stream?.destroy();
}

async function settleFirst(closing: Promise<void>, emitter: Pick<WireChannel, 'once' | 'off'> | ChannelModel, timeoutMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  let onClose: (() => void) | undefined;
  await Promise.race([
    closing.catch(() => undefined),
    new Promise<void>((resolve) => {
      onClose = resolve;
      emitter.once('close', onClose);
    }),
    new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs))),
  ]);
  clearTimeout(timer);
  if (onClose) emitter.off('close', onClose);
}
