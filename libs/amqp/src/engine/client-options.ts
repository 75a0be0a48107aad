import { randomBytes } from 'node:crypto';
import { silentLogger, type Logger } from '@warren/logger';
import type { ReplyMode } from './reply-consumer';
import type { ReplyUsers } from './reply-users';
import { checkPositiveInts } from '@warren/config';

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
  /** Identifies this client in call ids and its reply queue name. @default random (after `clientIdPrefix`) */
  readonly clientId?: string;
  /**
   * Begins the default client id: `<prefix>-<12 random characters>`, so the
   * reply queues of one RabbitMQ user match one permission pattern
   * (`NS.reply.<prefix>-…`, docs/security.md). Ignored when `clientId` is set.
   * @default none (the id is 12 random characters)
   */
  readonly clientIdPrefix?: string;
  /**
   * Accept the replies and progress of a call to `method` only from the
   * RabbitMQ user this returns, as RabbitMQ validated it (`user_id`);
   * others are dropped and counted (`stats().untrustedReplies`). For
   * deployments with one RabbitMQ user per service, whose services stamp
   * their replies (ServiceOptions.userId); `replyUsersOf` builds it from a
   * service → user and methods table. A method it returns `undefined` for is
   * not checked. See docs/security.md.
   * @default none (a reply is matched by its call id alone)
   */
  readonly replyUsers?: ReplyUsers;
  /** How long `close()` waits for pending calls before failing them. @default 5000 */
  readonly closeTimeoutMs?: number;
  /** @default a silent logger */
  readonly logger?: Logger;
}

export type ResolvedClientOptions = Required<Omit<ClientOptions, 'replyUsers' | 'clientIdPrefix'>> & Pick<ClientOptions, 'replyUsers'>;

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
    clientId: options.clientId ?? defaultClientId(options.clientIdPrefix),
    closeTimeoutMs: options.closeTimeoutMs ?? 5000,
    logger: options.logger ?? silentLogger(),
    ...(options.replyUsers === undefined ? {} : { replyUsers: options.replyUsers }),
  };
  checkPositiveInts('ClientOptions', resolved, ['defaultTimeoutMs', 'maxPending', 'maxBuffered', 'replyQueueExpiresMs', 'maxMessageBytes']);
  if (resolved.replyMode !== 'named' && resolved.replyMode !== 'direct') throw new RangeError(`ClientOptions.replyMode must be 'named' or 'direct'`);
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(resolved.clientId)) throw new RangeError('ClientOptions.clientId must be 1-64 characters of [A-Za-z0-9_-]');
  return resolved;
}

const clientIdPrefixPattern = /^[A-Za-z0-9_][A-Za-z0-9_-]{0,50}$/;

/** 12 random characters (72 bits), after `<prefix>-` when there is a prefix. */
function defaultClientId(prefix: string | undefined): string {
  const random = randomBytes(9).toString('base64url');
  if (prefix === undefined) return random.replace(/^-/, '_');
  if (!clientIdPrefixPattern.test(prefix)) throw new RangeError(`ClientOptions.clientIdPrefix must match ${clientIdPrefixPattern.source}, got ${JSON.stringify(prefix)}`);
  return `${prefix}-${random}`;
}

/**
 * A new name tail for a client's reply queue, of the same shape as its client id (so the same
 * permission pattern covers it, docs/security.md): the client moves to it when its reply queue
 * cannot be declared again (a durable queue whose home node is down, on a cluster).
 */
export function movedReplyId(clientId: string): string {
  const random = randomBytes(9).toString('base64url').replace(/^-/, '_');
  const tail = /-[A-Za-z0-9_-]{12}$/.exec(clientId);
  if (tail) return `${clientId.slice(0, tail.index)}-${random}`;
  if (/^[A-Za-z0-9_-]{12}$/.test(clientId)) return random;
  return `${clientId}-${random}`;
}
