// amqplib's close() of a channel or connection settles only on the broker's
// CloseOk: if the socket dies during the handshake it never settles. The
// bounded closes settle on the 'close' event, or at their timeout, and never
// reject.
import { EventEmitter } from 'node:events';
import type { Channel, ChannelModel } from 'amqplib';
import { closeChannel, closeModel } from '../src/close';

/** A channel whose close() never settles, like amqplib's after the connection died mid-close. */
function stuckChannel(): Channel & EventEmitter {
  return Object.assign(new EventEmitter(), { close: () => new Promise<void>(() => undefined) }) as unknown as Channel & EventEmitter;
}

it('settles when the channel emits close, though close() itself never does, and leaves no listener behind', async () => {
  const ch = stuckChannel();
  const closing = closeChannel(ch, 60_000);
  ch.emit('close');
  await expect(closing).resolves.toBeUndefined();
  expect(ch.listenerCount('close')).toBe(0);
});

it('settles at its timeout when neither the answer nor the close event comes', async () => {
  jest.useFakeTimers();
  try {
    const closing = closeChannel(stuckChannel(), 2000);
    await jest.advanceTimersByTimeAsync(2000);
    await expect(closing).resolves.toBeUndefined();
  } finally {
    jest.useRealTimers();
  }
});

it('never rejects, and closing a connection destroys its socket', async () => {
  const destroy = jest.fn();
  const model = Object.assign(new EventEmitter(), { close: () => Promise.reject(new Error('Connection closed')), connection: { stream: { destroy } } });
  await expect(closeModel(model as unknown as ChannelModel)).resolves.toBeUndefined();
  expect(destroy).toHaveBeenCalledTimes(1);
});
