import type { ServiceOptions } from './service-options';
/** An environment to read settings from; mains pass `process.env`, tests pass a plain object. */
export type Env = Readonly<Record<string, string | undefined>>;

/** The settings every Warren service main reads; docs/services.md has the table. */
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
 * Empty variables count as unset; a malformed number names its variable, so
 * start-up fails clearly.
 */
export function readServiceEnv(env: Env, defaults: { readonly name: string; readonly prefetch: number }): ServiceEnv {
  const namespace = env['WARREN_NAMESPACE'] || 'warren';
  return {
    amqpUrls: (env['AMQP_URL'] || 'amqp://guest:guest@127.0.0.1:5672').split(',').map((u) => u.trim()).filter(Boolean),
    namespace,
    name: env['SERVICE_NAME'] || defaults.name,
    instanceId: env['INSTANCE_ID'] || undefined,
    prefetch: positiveIntFromEnv(env, 'PREFETCH', defaults.prefetch),
    redisUrl: env['REDIS_URL'] || undefined,
    keyPrefix: env['WARREN_KEY_PREFIX'] || namespace,
    logLevel: env['LOG_LEVEL'] || 'info',
    userId: env['AMQP_USER_ID'] || undefined,
    shutdownTimeoutMs: positiveIntFromEnv(env, 'SHUTDOWN_TIMEOUT_MS', 15_000),
    supervised: env['WARREN_SUPERVISOR'] === 'stdin',
    ops: opsFromEnv(env),
  };
}

/** `WARREN_OPS_PORT` / `WARREN_OPS_HOST`, or undefined when no port is set (the ops server is opt-in). */
export function opsFromEnv(env: Env): OpsEnv | undefined {
  if (env['WARREN_OPS_PORT'] === undefined || env['WARREN_OPS_PORT'] === '') return undefined;
  const port = positiveIntFromEnv(env, 'WARREN_OPS_PORT', 0);
  if (port > 65535) throw new RangeError(`WARREN_OPS_PORT must be a TCP port (1-65535), got ${JSON.stringify(env['WARREN_OPS_PORT'])}`);
  return { port, host: env['WARREN_OPS_HOST'] || '127.0.0.1' };
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

/** Reads a positive integer variable, or `fallback` when it is unset or empty. */
export function positiveIntFromEnv(env: Env, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer, got ${JSON.stringify(raw)}`);
  return value;
}
