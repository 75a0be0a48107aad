// The worker of the soak (scripts/soak.ts) and of the fault tests
// (test/integration/faults): a Warren service with Redis tracking serving
// `work.run`, whose handler records each run in Redis (RPUSH of the
// instance id under the call id) before doing its work, so the driver can
// tell whether any call ran twice. Run as a process it is configured by
// WORK_* variables, prints `ready`, and is meant to be SIGKILLed.
import { Redis, type Cluster } from 'ioredis';
import { positiveIntFromEnv, startService, type HandlerContext, type ServiceMethod } from '@warren/amqp';
import { createRedisTracker } from '@warren/inflight';
import { CancelledError, JsonRpcError } from '@warren/jsonrpc';

type RetryPolicy = NonNullable<ServiceMethod['retry']>;

/** The service every worker runs, the method it serves, and the notification the fault tests' sinks take. */
export const workService = 'work';
export const workMethod = 'work.run';
export const noteMethod = 'work.note';

/** (A type, not an interface, so it passes as JSON-RPC params.) */
export type WorkParams = {
  /** How long the handler runs. */
  readonly ms: number;
  /** Echoed back doubled, so a caller can check it got its own answer. */
  readonly n: number;
  /** A poison message: the worker process running it SIGKILLs itself, on every attempt (only where `poison` is given to workMethods). */
  readonly poison?: boolean;
  /**
   * Commit a side effect first, through ctx.once (an entry under the call id in `effectsKey`), then run `ms`.
   * 'recover': when an earlier run died inside the effect, look it up (the list under the call id) and
   * commit it only if it is not there, instead of failing the call.
   */
  readonly effect?: 'once' | 'recover';
};

/** Key of one call's run list (one entry per run: the instance that ran it). */
export const runsKey = (prefix: string, callId: string): string => `${prefix}:runs:{${callId}}`;
/** Key of one call's committed side effects (one entry per commit: the instance that made it); more than one is a doubled effect. */
export const effectsKey = (prefix: string, callId: string): string => `${prefix}:effects:{${callId}}`;
/** Set of call ids that ran more than once (soak bookkeeping: the driver reads this, not every list). */
export const multiKey = (prefix: string): string => `${prefix}:runs-multi`;
const runsTtlMs = 15 * 60_000;

/** Waits `ms` or until the signal fires; then throws its reason, as a handler that honours cancellation does. */
export function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const fail = (): void => reject(signal.reason instanceof JsonRpcError ? signal.reason : new CancelledError());
    if (signal.aborted) return fail();
    const onAbort = (): void => {
      clearTimeout(timer);
      fail();
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** What else a worker's `work.run` does. */
export interface WorkOptions {
  /** What a poison call runs after recording its run (the worker process: SIGKILL itself). @default none: poison is refused */
  readonly poison?: () => void;
  /** The method's retry policy (it covers worker loss on a tracked worker). @default none */
  readonly retry?: RetryPolicy;
}

/**
 * `work.run` (or `method`): records the run, commits its side effect if asked (through ctx.once), runs
 * `ms`, answers `n * 2`.
 */
export function workMethods(redis: Redis | Cluster, prefix: string, method = workMethod, options: WorkOptions = {}): Record<string, ServiceMethod> {
  const { poison, retry } = options;
  return {
    [method]: {
      ...(retry === undefined ? {} : { retry }),
      handler: async (params: unknown, ctx: HandlerContext): Promise<number> => {
        const p = params as WorkParams;
        const key = runsKey(prefix, ctx.callId);
        const [[, runs] = []] = (await redis.multi().rpush(key, ctx.instanceId).pexpire(key, runsTtlMs).exec()) ?? [];
        if (typeof runs === 'number' && runs > 1) await redis.multi().sadd(multiKey(prefix), ctx.callId).pexpire(multiKey(prefix), runsTtlMs).exec();
        if (p.poison) {
          if (!poison) throw new JsonRpcError(-32000, 'poison refused: this worker does not kill itself');
          poison();
        }
        if (p.effect) {
          const effects = effectsKey(prefix, ctx.callId);
          const commit = async (): Promise<void> => void (await redis.multi().rpush(effects, ctx.instanceId).pexpire(effects, runsTtlMs).exec());
          // The previous run is dead (its lease ran out), so looking the effect up and then committing it cannot race with it.
          const recover = async (): Promise<void> => ((await redis.llen(effects)) > 0 ? undefined : commit());
          await ctx.once('effect', commit, p.effect === 'recover' ? { recover } : {});
        }
        await pause(p.ms, ctx.signal);
        return p.n * 2;
      },
    },
  };
}

/** `WORK_RETRY_ATTEMPTS` (with `WORK_RETRY_BACKOFF_MS`, default 1000, and `WORK_RETRY_MAX_BACKOFF_MS`): the retry policy of `work.run`; none when unset. */
export function retryFromEnv(vars: NodeJS.ProcessEnv): RetryPolicy | undefined {
  if (!vars['WORK_RETRY_ATTEMPTS']) return undefined;
  const policy = { attempts: positiveIntFromEnv(vars, 'WORK_RETRY_ATTEMPTS', 3), backoffMs: positiveIntFromEnv(vars, 'WORK_RETRY_BACKOFF_MS', 1000) };
  return vars['WORK_RETRY_MAX_BACKOFF_MS'] ? { ...policy, maxBackoffMs: positiveIntFromEnv(vars, 'WORK_RETRY_MAX_BACKOFF_MS', policy.backoffMs) } : policy;
}

function env(name: string, fallback?: string): string {
  const value = process.env[name] || fallback;
  if (value === undefined) throw new Error(`soak-worker: ${name} is not set`);
  return value;
}

async function main(): Promise<void> {
  const prefix = env('WORK_PREFIX');
  const leaseMs = positiveIntFromEnv(process.env, 'WORK_LEASE_MS', 2000);
  const redis = new Redis(env('WORK_REDIS_URL'), { maxRetriesPerRequest: 1 });
  const retry = retryFromEnv(process.env);
  const service = await startService({
    // A comma-separated list names the nodes of a cluster (the soak's --cluster).
    urls: env('WORK_AMQP_URL').split(','),
    heartbeatSeconds: positiveIntFromEnv(process.env, 'WORK_HEARTBEAT_S', 1),
    socketTimeoutMs: 1000,
    reconnect: { initialDelayMs: 50, maxDelayMs: 500 },
    connectionName: `${prefix}-worker-${env('WORK_INSTANCE')}`,
    namespace: env('WORK_NAMESPACE'),
    name: workService,
    instanceId: env('WORK_INSTANCE'),
    prefetch: positiveIntFromEnv(process.env, 'WORK_PREFETCH', 64),
    methods: workMethods(redis, prefix, workMethod, {
      ...(process.env['WORK_POISON'] === '1' ? { poison: () => process.kill(process.pid, 'SIGKILL') } : {}),
      ...(retry === undefined ? {} : { retry }),
    }),
    tracker: createRedisTracker({
      redis: env('WORK_TRACKER_REDIS_URL', env('WORK_REDIS_URL')),
      keyPrefix: prefix,
      leaseMs,
      heartbeatMs: Math.floor(leaseMs / 4),
      maxAttempts: positiveIntFromEnv(process.env, 'WORK_MAX_ATTEMPTS', 3),
    }),
  });
  process.on('SIGTERM', () => void service.close().then(() => redis.quit()).finally(() => process.exit(0)));
  process.stdout.write('ready\n');
}

if (require.main === module) {
  main().catch((err: unknown) => {
    process.stderr.write(`soak-worker failed: ${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  });
}
