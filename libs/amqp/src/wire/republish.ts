import type { WireProperties, WirePublishOptions } from '@warren/amqp-transport';
import { definedOnly } from '@warren/config';
import { Header, asWritten } from './headers';

/**
 * RabbitMQ's own bookkeeping on a message it dead-lettered or counted (`x-death`, the first and last
 * death summaries of 3.13, the quorum delivery count). A copy Warren publishes again never carries
 * it: any publisher can forge `x-death` (RabbitMQ 3.10 crashes the queue on a malformed one), and
 * the copy starts a history of its own.
 */
const brokerHeaders: ReadonlySet<string> = new Set<string>([
  Header.death, Header.deliveryCount,
  'x-first-death-exchange', 'x-first-death-queue', 'x-first-death-reason',
  'x-last-death-exchange', 'x-last-death-queue', 'x-last-death-reason',
]);

const nothing: ReadonlySet<string> = new Set<string>();

/** The headers a copy of a message keeps: all of `headers` but RabbitMQ's bookkeeping and the names in `drop`; integers written as `l`. */
export function carriedHeaders(headers: unknown, drop: ReadonlySet<string> = nothing): Record<string, unknown> {
  const kept: Record<string, unknown> = {};
  if (typeof headers !== 'object' || headers === null) return kept;
  for (const [k, v] of Object.entries(headers as Record<string, unknown>)) if (!brokerHeaders.has(k) && !drop.has(k)) kept[k] = asWritten(v);
  return kept;
}

/**
 * The properties of a copy of a request Warren publishes again (to a delay queue for a retry, to the
 * dead-letter exchange): the request's own, with `headers` (see {@link carriedHeaders}), without
 * `userId` (RabbitMQ refuses a message whose user id is not its publisher's) and without the
 * original `expiration` (a retry sets its own, a dead letter none: RabbitMQ drops it when it
 * dead-letters, too).
 */
export function copyProperties(properties: WireProperties, headers: Record<string, unknown>, expiration?: string): WirePublishOptions {
  const { headers: _headers, userId: _userId, expiration: _expiration, ...rest } = properties as WireProperties & { userId?: unknown };
  return { ...(definedOnly(rest) as WirePublishOptions), ...(expiration === undefined ? {} : { expiration }), headers };
}
