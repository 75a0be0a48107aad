import { closeChannel, type WireChannel, type WireModel, type WireQueueInfo } from '@warren/amqp-transport';
import { RpcConnectionLostError, RpcReplyQueueLostError, type LocalError } from '@warren/jsonrpc';
import type { Names } from '../wire/names';
import { replyQueueOptions } from '../wire/topology';

/**
 * Tells, at a reconnect, whether the broker is a new incarnation: one that restarted, and so lost the plain
 * (transient) requests and replies that were on the wire. Since reply queues are durable (RabbitMQ 4.3), the
 * reply queue itself survives a restart and cannot tell.
 *
 * The signal: beside its reply queue, a client keeps a durable probe queue (`NS.reply.<id>.probe`) holding one
 * transient marker message, which it consumes and never acks, so the marker stays in the queue, unacked, while
 * the client is connected. It consumes it on a channel of its own: the reply consumer's `multiple` acks would
 * ack the marker too if it were delivered on theirs. A connection that drops requeues the marker (RabbitMQ returns unacked messages when
 * it closes the connection); a broker that restarts discards it (transient messages do not survive a restart,
 * durable queue or not), and has no consumer on the queue either. So at the reconnect, before consuming again:
 *
 * | probe (passive declare)          | what happened                                                        |
 * |----------------------------------|----------------------------------------------------------------------|
 * | 1 message ready                  | the connection dropped; the broker kept running                      |
 * | 0 ready, ≥ 1 consumer            | the broker has not closed the old connection yet (half-open): same   |
 * | 0 ready, 0 consumers             | the marker is gone: the broker restarted                             |
 * | missing (404)                    | no answer (expired with the reply queue, or its node is down)        |
 *
 * Costs nothing per call: one passive declare at a reconnect with calls on the wire, a declare and a consume per
 * channel open, and one publish when the marker must be put back.
 */
export class RestartProbe {
  /** The marker was in the queue at the last open: only then does its absence mean a restart. */
  private armed = false;
  /** The channel holding the marker unacked (its consumer's). */
  private channel: WireChannel | undefined;

  /** `replyId`: what names the client's reply queue now (it moves when the queue's node is down; the probe moves with it). */
  constructor(private readonly n: Names, private readonly replyId: () => string, private readonly expiresMs: number) {}

  /** The probe queue's name now. */
  get queue(): string {
    return this.n.replyProbeQueue(this.replyId());
  }

  /**
   * At a reconnect with calls on the wire: what those calls fail with, if their answers cannot come (the reply
   * queue expired, or the broker restarted), else undefined. On a throwaway channel: a passive declare of a
   * missing queue closes its channel (404).
   */
  async lost(model: WireModel): Promise<LocalError | undefined> {
    const ch = await model.createChannel();
    ch.on('error', () => undefined); // a 404 closes it; that is an answer
    try {
      if (!(await passive(ch, this.n.replyQueue(this.replyId())))) return new RpcReplyQueueLostError();
      const probe = this.armed ? await passive(ch, this.queue) : undefined;
      return probe && probe.messageCount === 0 && probe.consumerCount === 0 ? new RpcConnectionLostError('broker_restarted') : undefined;
    } finally {
      await closeChannel(ch).catch(() => undefined);
    }
  }

  /**
   * Declares the probe and consumes it without acking, on a channel of its own (the previous one closed first,
   * which gives its marker back), so the marker stays unacked while the connection lives; puts a marker in when
   * there is none (first open, or after a restart). A marker that cannot be published (a caller without write on
   * the default exchange) leaves the probe unarmed: no restart is ever concluded from it. Rejects as the
   * declare does (404: the queue's home node is down).
   */
  async open(model: WireModel): Promise<void> {
    await this.closeChannel();
    const probeQueue = this.queue;
    const ch = await model.createChannel();
    ch.on('error', () => undefined); // a 404 on the declare closes it; the rejection says so
    try {
      const declared = await ch.assertQueue(probeQueue, { ...replyQueueOptions(this.expiresMs), arguments: { 'x-expires': this.expiresMs, 'x-queue-type': 'classic' } });
      await ch.consume(probeQueue, () => undefined, { noAck: false });
      this.channel = ch;
      this.armed = declared.messageCount > 0 || declared.consumerCount > 0 || (await putMarker(model, probeQueue));
    } catch (err) {
      await closeChannel(ch).catch(() => undefined);
      throw err;
    }
  }

  /** At the client's close, on its channel: deletes its reply queue and the probe, and closes the probe's channel. */
  async release(ch: WireChannel, replyQueue: string): Promise<void> {
    for (const q of [replyQueue, this.queue]) await ch.deleteQueue(q).catch(() => undefined);
    await this.closeChannel();
  }

  private async closeChannel(): Promise<void> {
    const ch = this.channel;
    this.channel = undefined;
    if (ch) await closeChannel(ch).catch(() => undefined);
  }
}

async function passive(ch: WireChannel, queue: string): Promise<WireQueueInfo | undefined> {
  return ch.checkQueue(queue).catch(() => undefined);
}

/** Publishes the transient marker on a channel of its own (a refused publish closes its channel); true once confirmed. */
async function putMarker(model: WireModel, probeQueue: string): Promise<boolean> {
  const ch = await model.createConfirmChannel().catch(() => undefined);
  if (!ch) return false;
  ch.on('error', () => undefined);
  try {
    ch.publish('', probeQueue, Buffer.from('restart probe'), { persistent: false });
    await ch.waitForConfirms();
    return true;
  } catch {
    return false;
  } finally {
    await closeChannel(ch).catch(() => undefined);
  }
}
