import type { WireChannel, WireConfirmChannel, WireMessage } from '@warren/amqp-transport';
import { CancelledError, RpcConnectionLostError, RpcNotConfirmedError } from '@warren/jsonrpc';
import type { Logger } from '@warren/logger';
import type { Abortable } from '@warren/calls';
import type { Names } from './names';
import { applyTopology, type Topology } from './topology';

/**
 * A cancel request on the wire (docs/protocol.md, "Cancellation";
 * docs/schemas/cancel.schema.json): published to the fanout exchange
 * `NS.cancel`, so every instance of every service hears it, in any
 * language, with or without the in-flight store. The instance running the
 * call aborts it and answers -32003; one that has not taken it yet answers
 * -32003 without running it if it arrives before `deadline`.
 */
export interface CancelMessage {
  readonly v: 1;
  readonly type: 'cancel';
  /** The call id: the request's AMQP `correlation_id`. */
  readonly callId: string;
  /** The call's absolute deadline (ms since the epoch), when the sender knows it: how long to remember the cancel. */
  readonly deadline?: number;
  /** Why, for logs. */
  readonly reason?: string;
}

/** How long a cancel for a call not (yet) running here is remembered when it carries no deadline (with one: until it). */
export const cancelMemoryMs = 60_000;
/** The longest `expiration` a cancel carries (2^31 - 1 ms, about 24.8 days): RabbitMQ refuses larger values on some versions. */
const maxCancelExpirationMs = 2_147_483_647;
/** Most cancels remembered at once; the oldest are forgotten first. */
const maxRemembered = 10_000;
const maxCallIdLength = 255;

/** Reads a cancel message; undefined for anything that does not fit (dropped). Never throws. */
export function parseCancel(body: Buffer): CancelMessage | undefined {
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const m = value as Record<string, unknown>;
  if (m['type'] !== 'cancel' || typeof m['callId'] !== 'string' || m['callId'].length === 0 || m['callId'].length > maxCallIdLength) return undefined;
  if (m['v'] !== undefined && m['v'] !== 1) return undefined;
  const deadline = typeof m['deadline'] === 'number' && Number.isFinite(m['deadline']) ? m['deadline'] : undefined;
  return { v: 1, type: 'cancel', callId: m['callId'], ...(deadline === undefined ? {} : { deadline }), ...(typeof m['reason'] === 'string' ? { reason: m['reason'].slice(0, 200) } : {}) };
}

/** The instance's own queue on the cancel exchange (exclusive: it goes away with the instance); the exchange is core topology. */
export function cancelTopology(n: Names, service: string, instanceId: string): Topology {
  const queue = n.cancelQueue(service, instanceId);
  return {
    exchanges: [],
    queues: [{ name: queue, options: { exclusive: true, autoDelete: true, durable: false, arguments: { 'x-max-length': maxRemembered } } }],
    bindings: [{ queue, exchange: n.cancelExchange, routingKey: '' }],
  };
}

/**
 * Publishes a cancel. Not mandatory and not confirmed: a cancel nobody hears
 * (no instance running) is dropped, and the in-flight store's mark, where
 * there is one, still answers the call when it is taken.
 */
export function publishCancel(channel: WireChannel, n: Names, message: Omit<CancelMessage, 'v' | 'type'>): void {
  const body: CancelMessage = { v: 1, type: 'cancel', ...message };
  // Covers the call's whole remaining time (a cancel waiting in a busy instance's queue still counts), not 60 s.
  const ttl = message.deadline === undefined ? cancelMemoryMs : Math.max(1, Math.min(maxCancelExpirationMs, Math.ceil(message.deadline - Date.now())));
  channel.publish(n.cancelExchange, '', Buffer.from(JSON.stringify(body)), { contentType: 'application/json', expiration: String(ttl) });
}

/**
 * Publishes a cancel on a confirm channel and resolves once RabbitMQ has it (`RpcClient.cancelOnWire`):
 * no channel, RpcConnectionLostError; a failed publish, a nack or a channel closed before the confirm,
 * RpcNotConfirmedError (RabbitMQ may not have it; sending it again is harmless).
 */
export function publishCancelConfirmed(ch: WireConfirmChannel | undefined, n: Names, message: Omit<CancelMessage, 'v' | 'type'>): Promise<void> {
  if (!ch) return Promise.reject(new RpcConnectionLostError('not_connected'));
  try {
    publishCancel(ch, n, message);
  } catch (err) {
    return Promise.reject(new RpcNotConfirmedError('publish_failed', { cause: err }));
  }
  return ch.waitForConfirms().catch((err: unknown) => Promise.reject(new RpcNotConfirmedError('not_confirmed', { cause: err })));
}

/**
 * The cancels an instance has heard for calls it is not running (yet): a
 * request that arrives later is answered -32003 without running. Bounded
 * and self-expiring.
 */
export class CancelBook {
  private readonly until = new Map<string, number>();

  remember(callId: string, deadline: number | undefined, now = Date.now()): void {
    if (this.until.size >= maxRemembered) this.sweep(now);
    if (this.until.size >= maxRemembered) {
      const oldest = this.until.keys().next();
      if (!oldest.done) this.until.delete(oldest.value);
    }
    // Until the deadline it names, however far (a delayed call's may be weeks away; the count is bounded); else 60 s.
    this.until.set(callId, deadline ?? now + cancelMemoryMs);
  }

  /** True (once) when `callId` was cancelled and the cancel is still current. */
  take(callId: string, now = Date.now()): boolean {
    if (this.until.size === 0) return false;
    const until = this.until.get(callId);
    if (until === undefined) return false;
    this.until.delete(callId);
    return until >= now;
  }

  private sweep(now: number): void {
    for (const [id, until] of this.until) if (until < now) this.until.delete(id);
  }
}

/**
 * A service instance's end of wire cancellation: listens on its own queue on
 * `NS.cancel`, aborts the matching running call (its caller is answered
 * -32003), and remembers the others so they are answered without running if
 * they arrive later.
 */
export class CancelReceiver {
  private readonly book = new CancelBook();

  constructor(private readonly running: () => Iterable<[WireMessage, Abortable]>, private readonly log: Logger) {}

  /** Declares the instance's cancel queue on `channel` and consumes it (no acks: a lost cancel is only a missed cancel). */
  async listen(channel: WireChannel, n: Names, service: string, instanceId: string): Promise<void> {
    await applyTopology(channel, cancelTopology(n, service, instanceId));
    await channel.consume(n.cancelQueue(service, instanceId), (msg) => {
      const cancel = msg ? parseCancel(msg.content) : undefined;
      if (cancel) this.heard(cancel);
    }, { noAck: true });
  }

  heard(cancel: CancelMessage): void {
    for (const [msg, abort] of this.running()) {
      if (msg.properties.correlationId === cancel.callId) {
        this.log.info({ callId: cancel.callId, reason: cancel.reason }, 'call cancelled on the wire');
        abort.abort(new CancelledError(undefined, { reason: 'cancelled' }));
        return;
      }
    }
    this.book.remember(cancel.callId, cancel.deadline);
  }

  /** True when a cancel for `callId` was heard before it arrived: answer -32003 without running it. */
  cancelledBeforeStart(callId: string): boolean {
    return this.book.take(callId);
  }
}
