import { randomBytes } from 'node:crypto';
import { silentLogger, type Logger } from '@warren/logger';
import type { ReplyMode } from './reply-consumer';

export interface ClientOptions {
  /** Namespace every exchange and queue name is built from; services and clients must agree. @default 'warren' */
  readonly namespace?: string;
  /** Deadline of calls that set none. @default 30000 */
  readonly defaultTimeoutMs?: number;
  /** Most calls waiting for an answer at once; past it calls fail with Overloaded. @default 10000 */
  readonly maxPending?: number;
  /** Most calls and notifications held while the connection is down; past it they fail with Overloaded. @default 1000 */
  readonly maxBuffered?: number;
  /**
   * Where replies come back. `named`: a queue of this client's own with
   * `x-expires`, which keeps replies across a short reconnect. `direct`:
   * RabbitMQ direct reply-to, no queue, but replies are lost on reconnect.
   * See docs/protocol.md for the measurements behind the default. @default 'named'
   */
  readonly replyMode?: ReplyMode;
  /** How long a named reply queue outlives its client's connection. @default 60000 */
  readonly replyQueueExpiresMs?: number;
  /** Largest encoded request or notification. @default 1048576 */
  readonly maxMessageBytes?: number;
  /** Persist requests and notifications to disk (for durable job queues). @default false */
  readonly persistent?: boolean;
  /** Identifies this client in call ids and its reply queue name. @default random */
  readonly clientId?: string;
  /** How long `close()` waits for pending calls before failing them. @default 5000 */
  readonly closeTimeoutMs?: number;
  /** @default a silent logger */
  readonly logger?: Logger;
}

export type ResolvedClientOptions = Required<ClientOptions>;

export function resolveClientOptions(options: ClientOptions): ResolvedClientOptions {
  const resolved: ResolvedClientOptions = {
    namespace: options.namespace ?? 'warren',
    defaultTimeoutMs: options.defaultTimeoutMs ?? 30_000,
    maxPending: options.maxPending ?? 10_000,
    maxBuffered: options.maxBuffered ?? 1000,
    replyMode: options.replyMode ?? 'named',
    replyQueueExpiresMs: options.replyQueueExpiresMs ?? 60_000,
    maxMessageBytes: options.maxMessageBytes ?? 1024 * 1024,
    persistent: options.persistent ?? false,
    // Never a leading '-': call ids start with it, and `warren status <call id>` would read one as an option.
    clientId: options.clientId ?? randomBytes(9).toString('base64url').replace(/^-/, '_'),
    closeTimeoutMs: options.closeTimeoutMs ?? 5000,
    logger: options.logger ?? silentLogger(),
  };
  for (const field of ['defaultTimeoutMs', 'maxPending', 'maxBuffered', 'replyQueueExpiresMs', 'maxMessageBytes'] as const) {
    if (!Number.isSafeInteger(resolved[field]) || resolved[field] < 1) throw new RangeError(`ClientOptions.${field} must be a positive integer, got ${String(resolved[field])}`);
  }
  if (resolved.replyMode !== 'named' && resolved.replyMode !== 'direct') throw new RangeError(`ClientOptions.replyMode must be 'named' or 'direct'`);
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(resolved.clientId)) throw new RangeError('ClientOptions.clientId must be 1-64 characters of [A-Za-z0-9_-]');
  return resolved;
}
