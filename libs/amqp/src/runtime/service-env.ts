import { envGiven, envValue, isPositiveInt, type Env } from '@warren/config';
import type { ServiceOptions } from './service-options';

export type { Env };

/** The settings every Warren service main reads; @warren/config's schema holds the variables (docs/configuration.md). */
export interface ServiceEnv {
  /** `AMQP_URL`: RabbitMQ URL(s); a comma-separated list names the nodes of a cluster. */
  readonly amqpUrls: string[];
  /** `WARREN_NAMESPACE`: prefix of every exchange and queue; callers and services must agree on it. */
  readonly namespace: string;
  /** `SERVICE_NAME`: names the service's queues; instances with the same name share the work. */
  readonly name: string;
  /** `INSTANCE_ID`: stable id for this instance (logs, discovery); random when unset. */
  readonly instanceId: string | undefined;
  /** `PREFETCH`: requests one instance runs at once. */
  readonly prefetch: number;
  /** `REDIS_URL`, when set. */
  readonly redisUrl: string | undefined;
  /** `WARREN_KEY_PREFIX`: prefix of Redis keys; the CLI and the broker must use the same. @default the namespace */
  readonly keyPrefix: string;
  /** `LOG_LEVEL`. @default 'info' */
  readonly logLevel: string;
  /**
   * `AMQP_USER_ID`: the RabbitMQ user of `AMQP_URL`, when each service has its own (docs/security.md).
   * Replies and progress then carry it as `user_id`, and the service's own calls use reply queues
   * `NS.reply.<user>-…`, which its permissions allow. @default unset (one user for everyone)
   */
  readonly userId: string | undefined;
  /**
   * `SHUTDOWN_TIMEOUT_MS`: the most a graceful shutdown may take before the process exits with 1
   * anyway; calls still unacknowledged then are redelivered by RabbitMQ to another instance.
   * Above the service's own grace for running handlers (10 s), below `npm start`'s 20 s. @default 15000
   */
  readonly shutdownTimeoutMs: number;
  /** `WARREN_SUPERVISOR=stdin`: stdin is the supervisor's pipe; its end means the supervisor is gone (supervisor-watch.ts). @default false */
  readonly supervised: boolean;
  /**
   * `WARREN_OPS_PORT` (and `WARREN_OPS_HOST`, default 127.0.0.1): where the process answers
   * `/healthz` and `/readyz` (ops-server.ts). Off when the port is unset.
   */
  readonly ops: OpsEnv | undefined;
}

/** The ops port's settings, as runServiceMain's `ops` option takes them. */
export interface OpsEnv {
  readonly port: number;
  readonly host: string;
}

/**
 * Reads the settings every service shares, with the service's own defaults.
 * Each variable parses through @warren/config's schema: empty counts as unset,
 * and a malformed value names its variable, so start-up fails clearly.
 */
export function readServiceEnv(env: Env, defaults: { readonly name: string; readonly prefetch: number }): ServiceEnv {
  const namespace = envValue(env, 'WARREN_NAMESPACE');
  return {
    amqpUrls: envValue(env, 'AMQP_URL'),
    namespace,
    name: envGiven(env, 'SERVICE_NAME') ?? defaults.name,
    instanceId: envGiven(env, 'INSTANCE_ID'),
    prefetch: envGiven(env, 'PREFETCH') ?? defaults.prefetch,
    redisUrl: envGiven(env, 'REDIS_URL'),
    keyPrefix: envGiven(env, 'WARREN_KEY_PREFIX') ?? namespace,
    logLevel: envValue(env, 'LOG_LEVEL'),
    userId: envGiven(env, 'AMQP_USER_ID'),
    shutdownTimeoutMs: envValue(env, 'SHUTDOWN_TIMEOUT_MS'),
    supervised: envGiven(env, 'WARREN_SUPERVISOR') === 'stdin',
    ops: opsFromEnv(env),
  };
}

/** `WARREN_OPS_PORT` / `WARREN_OPS_HOST`, or undefined when no port is set (the ops server is opt-in). */
export function opsFromEnv(env: Env): OpsEnv | undefined {
  const port = envGiven(env, 'WARREN_OPS_PORT');
  return port === undefined ? undefined : { port, host: envValue(env, 'WARREN_OPS_HOST') };
}

/**
 * A service's options as run by RabbitMQ user `userId` (AMQP_USER_ID): its
 * replies and progress carry the user (ServiceOptions.userId) and its nested
 * calls' reply queues begin with it (ClientOptions.clientIdPrefix), as
 * permissionsFor expects. `undefined` leaves the options as they are.
 *
 * @example startService({ urls, ...asUser(calculatorService(config, deps), config.userId) })
 */
export function asUser<O extends ServiceOptions>(options: O, userId: string | undefined): O {
  return userId === undefined ? options : { ...options, userId, client: { ...options.client, clientIdPrefix: userId } };
}

/** Reads a positive integer variable, or `fallback` when it is unset or empty; for test scripts' own variables (the soak worker's), outside @warren/config's schema. */
export function positiveIntFromEnv(env: Env, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!isPositiveInt(value)) throw new RangeError(`${name} must be a positive integer, got ${JSON.stringify(raw)}`);
  return value;
}
