import { randomBytes } from 'node:crypto';
import type { DecodeLimits, Middleware, MethodDefinition, NotificationDefinition } from '@warren/jsonrpc';
import { silentLogger, type Logger } from '@warren/logger';
import type { ErrorDescription, ToolSpec } from '../wire/method-declarations';
import type { ClientOptions } from '../engine/client-options';
import type { HandlerContext } from './context';
import { assertResourceName } from '../wire/names';
import { maxAnnounceIntervalMs } from '../wire/protocol-schemas';
import type { QueueType } from '../wire/topology';
import { assertRetryPolicy, type RetryPolicy } from './retry';
import type { CallTracker } from './tracker';
import type { ServiceObserver } from './service-observer';
import type { DirectoryWriter } from '../discovery/directory';
import type { ScheduleDeclaration } from '../wire/schedule-declaration';
import { assertServiceSchedules } from './service-schedules';

export interface ServiceMethod<P = unknown, R = unknown> extends MethodDefinition<P, R, HandlerContext> {
  /** Declares the method as an MCP tool, listed by the gateway's tools/list. */
  readonly tool?: ToolSpec;
  /** Retries of calls failing with a retryable error, waited out in RabbitMQ (retry.ts). @default none */
  readonly retry?: RetryPolicy;
  /**
   * A long-running job: announced, so callers (and `/services`, `rpc.discover`)
   * know to send it persistent with a generous deadline. @default false
   */
  readonly jobStyle?: boolean;
  /** Application errors the method may answer, announced for discovery (OpenRPC `errors`). @default none */
  readonly errors?: readonly ErrorDescription[];
}

export type ServiceNotification<P = unknown> = NotificationDefinition<P, HandlerContext>;

export interface ServiceOptions {
  /** Service name: names its queues; every instance of one service shares them. */
  readonly name: string;
  /** @default 'warren' */
  readonly namespace?: string;
  readonly methods?: Readonly<Record<string, ServiceMethod>>;
  /**
   * Methods in the `rpc.` namespace the JSON-RPC specification reserves for
   * system extensions (e.g. the broker's `rpc.discover`). Served like
   * `methods` but never announced. Infrastructure only. @default {}
   */
  readonly reservedMethods?: Readonly<Record<string, ServiceMethod>>;
  /** Notifications this service handles once per service (instances share the work). */
  readonly notifications?: Readonly<Record<string, ServiceNotification>>;
  /** Notifications every instance receives (e.g. cache invalidation). */
  readonly instanceNotifications?: Readonly<Record<string, ServiceNotification>>;
  /**
   * Schedules the service defines in code: checked when it starts (a `TypeError` naming the
   * schedule and field), announced with its methods, and kept by the broker's scheduler as
   * `source: "service:<name>"` (docs/scheduling.md, "Schedules in code"). @default []
   */
  readonly schedules?: readonly ScheduleDeclaration[];
  /** Requests one instance runs at once. @default 32 */
  readonly prefetch?: number;
  /**
   * Type of the service's shared queues (requests, events, dead letters).
   * Quorum queues are replicated across a cluster's nodes and survive the
   * loss of a minority of them; classic queues live on one node.
   * @default 'quorum' when the connection names several nodes (a cluster), else 'classic'
   */
  readonly queueType?: QueueType;
  /**
   * Quorum request queues only (`x-delivery-limit`): redeliveries of one
   * request (after a worker crash or a lost connection) before RabbitMQ
   * dead-letters it to the service's dead-letter queue, so a request that
   * kills every worker it reaches cannot loop forever, with or without a
   * tracker. Keep it above the tracker's `maxAttempts`, which dead-letters
   * earlier and answers the caller. Not set by default: RabbitMQ refuses to
   * re-declare an existing queue with a new argument (PRECONDITION_FAILED), so
   * turning it on for a queue that exists needs a policy instead (docs/scaling.md).
   * Unset, RabbitMQ's own applies: none on 3.x, 20 on 4.0 and later (docs/reliability.md,
   * "Delivery limits"); a `delivery-limit` policy makes both the same. @default none
   */
  readonly deliveryLimit?: number;
  /**
   * true: a lasting service, its queues never expire and job-style requests are published persistent.
   * false: a temporary service (embedded mode, tests). Its queues are still durable (RabbitMQ 4.3
   * refuses queues that are neither durable nor exclusive), but its request and event queues carry
   * `x-expires` (1 h, wire/topology.ts) so they go once no instance has consumed them for that long,
   * and it announces `durable: false`, so nothing is published persistent to it. Quorum queues ignore it.
   * @default true
   */
  readonly durable?: boolean;
  /** Time running handlers get to finish on close before they are aborted and requeued. @default 10000 */
  readonly shutdownGraceMs?: number;
  /** Deadline given to requests that carry none (e.g. from a non-Warren client). @default 30000 */
  readonly defaultTimeoutMs?: number;
  /** Most messages kept in the service's dead-letter queue. @default 10000 */
  readonly deadLetterMax?: number;
  readonly middleware?: readonly Middleware<HandlerContext>[];
  /** Put stacks of unexpected handler errors in error.data. Debugging only. @default false */
  readonly exposeErrorStack?: boolean;
  readonly decodeLimits?: DecodeLimits;
  /** In-flight tracking (see @warren/inflight). @default none */
  readonly tracker?: CallTracker;
  /**
   * Where the instance records its announced methods so callers can tell which service is
   * missing after every instance stopped (@warren/inflight's `RedisDirectory`). Written at start,
   * after each reconnect and hourly; a failed write is logged and tried at the next announcement.
   * @default none
   */
  readonly directory?: DirectoryWriter;
  /** Options of the client handlers use for nested calls. */
  readonly client?: Omit<ClientOptions, 'namespace' | 'logger'>;
  /** @default random */
  readonly instanceId?: string;
  /**
   * The RabbitMQ user this service's connection logs in as. Set, every reply
   * and progress report carries it as `user_id`, which RabbitMQ checks against
   * the login (a wrong value closes the channel, 406), so a caller with
   * `replyUsers` can tell a genuine answer from a forged one. For deployments
   * with one RabbitMQ user per service (docs/security.md).
   * @default none (replies carry no user_id)
   */
  readonly userId?: string;
  /** How often the instance announces itself on the control exchange for discovery. @default 10000 */
  readonly announceIntervalMs?: number;
  /** Free-form metadata announced for discovery (version, description). */
  readonly metadata?: Readonly<Record<string, string>>;
  /** @default a silent logger */
  readonly logger?: Logger;
  /** Told of every request settled (metrics: worker-metrics.ts). @default none */
  readonly observer?: ServiceObserver;
}

export type ResolvedServiceOptions = Required<Omit<ServiceOptions, 'tracker' | 'directory' | 'client' | 'decodeLimits' | 'deliveryLimit' | 'userId' | 'observer'>> & Pick<ServiceOptions, 'tracker' | 'directory' | 'client' | 'decodeLimits' | 'deliveryLimit' | 'userId' | 'observer'>;

/** What the connection tells the options: `clustered` when it names several nodes. */
export interface ServiceOptionContext {
  readonly clustered?: boolean;
}

export function resolveServiceOptions(options: ServiceOptions, context: ServiceOptionContext = {}): ResolvedServiceOptions {
  assertResourceName('ServiceOptions.name', options.name);
  const resolved: ResolvedServiceOptions = {
    ...options,
    namespace: options.namespace ?? 'warren',
    methods: options.methods ?? {},
    reservedMethods: options.reservedMethods ?? {},
    notifications: options.notifications ?? {},
    instanceNotifications: options.instanceNotifications ?? {},
    schedules: assertServiceSchedules(options.schedules ?? []),
    prefetch: options.prefetch ?? 32,
    queueType: options.queueType ?? (context.clustered ? 'quorum' : 'classic'),
    durable: options.durable ?? true,
    shutdownGraceMs: options.shutdownGraceMs ?? 10_000,
    defaultTimeoutMs: options.defaultTimeoutMs ?? 30_000,
    deadLetterMax: options.deadLetterMax ?? 10_000,
    middleware: options.middleware ?? [],
    exposeErrorStack: options.exposeErrorStack ?? false,
    instanceId: options.instanceId ?? randomBytes(6).toString('hex'),
    metadata: options.metadata ?? {},
    announceIntervalMs: options.announceIntervalMs ?? 10_000,
    logger: options.logger ?? silentLogger(),
  };
  for (const field of ['prefetch', 'shutdownGraceMs', 'defaultTimeoutMs', 'deadLetterMax', 'announceIntervalMs'] as const) {
    if (!Number.isSafeInteger(resolved[field]) || resolved[field] < 1) throw new RangeError(`ServiceOptions.${field} must be a positive integer, got ${String(resolved[field])}`);
  }
  if (resolved.userId !== undefined && (resolved.userId.length === 0 || Buffer.byteLength(resolved.userId) > 255)) throw new RangeError('ServiceOptions.userId must be 1-255 bytes');
  if (resolved.deliveryLimit !== undefined && (!Number.isSafeInteger(resolved.deliveryLimit) || resolved.deliveryLimit < 1)) {
    throw new RangeError(`ServiceOptions.deliveryLimit must be a positive integer, got ${String(resolved.deliveryLimit)}`);
  }
  if (resolved.announceIntervalMs > maxAnnounceIntervalMs) throw new RangeError(`ServiceOptions.announceIntervalMs must be at most ${maxAnnounceIntervalMs}`);
  if (resolved.queueType !== 'classic' && resolved.queueType !== 'quorum') throw new RangeError(`ServiceOptions.queueType must be 'classic' or 'quorum'`);
  assertResourceName('ServiceOptions.instanceId', resolved.instanceId);
  const unreserved = Object.keys(resolved.reservedMethods).filter((m) => !m.startsWith('rpc.'));
  if (unreserved.length > 0) throw new TypeError(`reservedMethods must begin with "rpc.": ${unreserved.join(', ')}`);
  for (const [name, m] of Object.entries(resolved.methods)) if (m.retry) assertRetryPolicy(name, m.retry);
  const overlap = Object.keys(resolved.notifications).filter((n) => n in resolved.instanceNotifications);
  if (overlap.length > 0) throw new TypeError(`notifications and instanceNotifications both name: ${overlap.join(', ')}`);
  return resolved;
}
