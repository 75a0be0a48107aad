import type { WireConfirmChannel, WirePublishOptions } from '@warren/amqp-transport';
import { applyTopology } from '../wire/topology';
import { delayEntryExchange, delayHeaders, delayTopology, type DelayTarget } from '../wire/delay';
import type { Names } from '../wire/names';
import { Header } from '../wire/headers';

/**
 * A client's way into the delay chain (wire/delay.ts): declares the chain on a channel before the
 * first delayed publish on it (so once per channel, and again on the new channel after a
 * reconnect), then publishes the message to the top level, persistent and without `expiration`
 * (a per-message TTL would cut the wait short: RabbitMQ applies the lower of the two).
 */
export class DelayChain {
  private declared: { readonly channel: WireConfirmChannel; readonly ready: Promise<void> } | undefined;

  constructor(private readonly n: Names) {}

  /**
   * Publishes `body` to wait until `dueAt`, then to go to `to` with routing key `method`. `callback`
   * is told once: RabbitMQ's confirm, or the failure (declaring the chain, publishing).
   */
  publish(ch: WireConfirmChannel, to: DelayTarget, method: string, body: Buffer, props: WirePublishOptions, dueAt: number, callback: (err: unknown) => void): void {
    // Copied now (the caller refills its header table for its next publish). The worker's queue-wait
    // metric (x-warren-sent) counts from when a delayed call is due, not from when it was sent.
    const own = { ...props.headers, ...(to === 'call' ? { [Header.sentAt]: dueAt } : {}) };
    const { expiration: _dropped, ...rest } = props;
    this.ready(ch).then(() => {
      try {
        // Measured once the chain is declared, so the time the declare took is not waited twice.
        const delayMs = Math.max(1, Math.ceil(dueAt - Date.now()));
        const options: WirePublishOptions = { ...rest, headers: { ...own, ...delayHeaders(delayMs, to, dueAt) }, persistent: true };
        ch.publish(delayEntryExchange(this.n), method, body, options, (err) => callback(err ?? undefined));
      } catch (err) {
        callback(err);
      }
    }, callback);
  }

  private ready(ch: WireConfirmChannel): Promise<void> {
    if (this.declared?.channel !== ch) this.declared = { channel: ch, ready: applyTopology(ch, delayTopology(this.n)) };
    const { ready } = this.declared;
    // A failed declare is tried again by the next delayed publish.
    ready.catch(() => {
      if (this.declared?.ready === ready) this.declared = undefined;
    });
    return ready;
  }
}
