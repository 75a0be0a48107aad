import type { Names } from './names';
import { coreTopology, type BindingDecl, type ExchangeBindingDecl, type QueueDecl, type Topology } from './topology';

/**
 * Delayed messages without a RabbitMQ plugin (docs/scheduling.md, "Delayed calls"; docs/protocol.md,
 * "Delayed calls"): a delay of D ms is written in binary, and the message waits in the queue of
 * level k (TTL 2^k ms) for every bit k set in D, from the highest level down. Every message in one
 * level's queue has the same TTL, so the queue's order is its expiry order (head-of-queue expiry is
 * then exact, on classic and quorum queues alike), and a message makes at most {@link delayLevels}
 * hops. The total wait is exactly D (plus a few ms per hop); no bucket rounds it.
 *
 * The chain, for levels L−1 down to 0 (all durable, the queues classic):
 *
 *   NS.delay.<k>       headers exchange: `warren-delay-<k>: "1"` → queue NS.delay.<k>.wait,
 *                                        `warren-delay-<k>: "0"` → exchange NS.delay.<k−1> (NS.delay.due for k = 0)
 *   NS.delay.<k>.wait  x-message-ttl 2^k, dead-letters (routing key kept) to NS.delay.<k−1> (NS.delay.due for k = 0)
 *   NS.delay.due       headers exchange: `warren-delay-to: "call"` → NS.rpc, `"event"` → NS.events
 *
 * The routing key stays the method name all along, so the due message reaches the request (or
 * event) exchange as if it had just been published. Header values are strings: any AMQP client
 * can write them, and RabbitMQ's headers exchange ignores binding keys starting with `x-`.
 */

/** Levels of the chain: 32 levels of 1 ms to 2^31 ms cover every delay up to 2^32 − 1 ms (49.7 days). */
export const delayLevels = 32;

/** The longest delay: 2^32 − 1 ms, about 49.7 days. */
export const maxDelayMs = 2 ** delayLevels - 1;

/** Headers of a delayed message; see the module comment. */
export const DelayHeader = {
  /** `call` (to the request exchange) or `event` (to the event exchange) when due. */
  to: 'warren-delay-to',
  /** When the message is due, ms since the epoch (for readers: listings, metrics; routing ignores it). */
  due: 'x-warren-due',
} as const;

/** Where a due message goes: the request exchange (a call) or the event exchange (a notification). */
export type DelayTarget = 'call' | 'event';

/** The header that says whether level `level` holds the message (`"1"`) or lets it through (`"0"`). */
export function delayBitHeader(level: number): string {
  return `warren-delay-${level}`;
}

/** Checks a delay: an integer in 0..{@link maxDelayMs}. */
export function isDelayMs(delayMs: number): boolean {
  return Number.isSafeInteger(delayMs) && delayMs >= 0 && delayMs <= maxDelayMs;
}

/** The levels a delay waits in, highest first: the set bits of `delayMs`. @example delayLevelsOf(5) // [2, 0] */
export function delayLevelsOf(delayMs: number): number[] {
  if (!isDelayMs(delayMs)) throw new RangeError(`delay must be an integer in 0..${maxDelayMs} ms, got ${delayMs}`);
  const levels: number[] = [];
  for (let level = delayLevels - 1; level >= 0; level--) if (Math.floor(delayMs / 2 ** level) % 2 === 1) levels.push(level);
  return levels;
}

/** The headers that route a message through the chain for `delayMs`, then to `to`; merged into the message's own. */
export function delayHeaders(delayMs: number, to: DelayTarget, dueAt: number): Record<string, string | number> {
  const set = new Set(delayLevelsOf(delayMs));
  const headers: Record<string, string | number> = { [DelayHeader.to]: to, [DelayHeader.due]: dueAt };
  for (let level = 0; level < delayLevels; level++) headers[delayBitHeader(level)] = set.has(level) ? '1' : '0';
  return headers;
}

/** The exchange a delayed message is published to: the top level's. */
export function delayEntryExchange(n: Names): string {
  return n.delayExchange(delayLevels - 1);
}

/**
 * The chain's exchanges, queues and bindings, and the core exchanges it ends in. Declared by a
 * client before its first delayed publish on each channel (so again after a reconnect); services
 * need nothing of it.
 */
export function delayTopology(n: Names): Topology {
  const core = coreTopology(n);
  const below = (level: number): string => (level === 0 ? n.delayDueExchange : n.delayExchange(level - 1));
  const queues: QueueDecl[] = [];
  const bindings: BindingDecl[] = [];
  const exchangeBindings: ExchangeBindingDecl[] = [];
  for (let level = delayLevels - 1; level >= 0; level--) {
    const exchange = n.delayExchange(level);
    const queue = n.delayQueue(level);
    // Classic: one node's queue, durable, its persistent messages and their expiry kept across a restart.
    queues.push({ name: queue, options: { durable: true, arguments: { 'x-queue-type': 'classic', 'x-message-ttl': 2 ** level, 'x-dead-letter-exchange': below(level) } } });
    bindings.push({ queue, exchange, routingKey: '', arguments: { 'x-match': 'all', [delayBitHeader(level)]: '1' } });
    exchangeBindings.push({ destination: below(level), source: exchange, routingKey: '', arguments: { 'x-match': 'all', [delayBitHeader(level)]: '0' } });
  }
  exchangeBindings.push(
    { destination: n.requestExchange, source: n.delayDueExchange, routingKey: '', arguments: { 'x-match': 'all', [DelayHeader.to]: 'call' } },
    { destination: n.eventExchange, source: n.delayDueExchange, routingKey: '', arguments: { 'x-match': 'all', [DelayHeader.to]: 'event' } },
  );
  // Lower levels first, so every exchange a binding names exists by the time it is bound.
  const levelExchanges = Array.from({ length: delayLevels }, (_, level) => ({ name: n.delayExchange(level), type: 'headers' as const, options: { durable: true } }));
  return {
    exchanges: [...core.exchanges, { name: n.delayDueExchange, type: 'headers', options: { durable: true } }, ...levelExchanges],
    queues,
    bindings,
    exchangeBindings,
  };
}
