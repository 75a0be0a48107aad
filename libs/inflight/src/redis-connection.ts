// The ioredis client of the in-flight store: opened from a RedisConfig (single node, Sentinel,
// Cluster, or a client the caller owns) with fail-fast settings, closed politely, and our Lua
// scripts (scripts.ts) defined on it and called by name.
import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import { stallTolerantTimeouts, type RedisClient } from '@warren/redis';
import type { RedisConfig } from './options';
import { scripts, type ScriptName } from './scripts';
import { sleep } from './sleep';

export type { RedisClient } from '@warren/redis';

type Invoke = (...args: (string | number)[]) => Promise<unknown>;

/** Our scripts' replies are parsed as RESP2-shaped arrays, so `replyMapping` is always left at its default ('legacy'). */
type LegacyOptions = Omit<RedisOptions, 'replyMapping'>;

function legacy<T extends object>(options: T): Omit<T, 'replyMapping'> {
  const { replyMapping: _ignored, ...rest } = options as T & { replyMapping?: unknown };
  return rest;
}

/** Sensible client settings for tracking: fail fast (the call runs untracked) rather than queue commands while Redis is away. */
function clientOptions(commandTimeoutMs: number, autoPipelining: boolean): LegacyOptions {
  return {
    enableAutoPipelining: autoPipelining,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    // No `commandTimeout`: ioredis's own fails replies a blocked event loop has not read yet (@warren/redis stallTolerantTimeouts).
    // ioredis waits this long (default 2 s) for a socket's 'close' on disconnect, and one whose
    // connection was refused never sends another: a process that could not reach Redis would
    // linger 2 s on exit (the CLI, when Redis is away). A live socket closes well within it.
    disconnectTimeout: commandTimeoutMs,
    // Exponential backoff with jitter, capped at 2 s: a fleet of workers does not reconnect in lockstep.
    retryStrategy: (times: number) => Math.round(Math.min(2000, 50 * 2 ** Math.min(times, 6)) * (0.5 + Math.random() / 2)),
  };
}

/**
 * Opens the client a {@link RedisConfig} describes; `owned` says whether closing it is ours to do.
 * `autoPipelining` applies to single nodes and Sentinel; a cluster client always pipelines, since
 * there every batched script carries one call.
 */
export function openRedis(config: RedisConfig, commandTimeoutMs: number, autoPipelining = true): { client: RedisClient; owned: boolean } {
  const base = clientOptions(commandTimeoutMs, autoPipelining);
  // A client the caller owns keeps the settings it was made with, its command timeout included.
  if (typeof config === 'object' && 'client' in config) return { client: config.client, owned: false };
  let client: RedisClient;
  if (typeof config === 'string') client = new Redis(config, base);
  else if ('cluster' in config) {
    const { redisOptions, ...rest } = legacy<ClusterOptions>(config.clusterOptions ?? {});
    client = new Cluster([...config.cluster], {
      enableAutoPipelining: true,
      enableOfflineQueue: false,
      ...(base.retryStrategy ? { clusterRetryStrategy: base.retryStrategy } : {}),
      ...rest,
      redisOptions: { maxRetriesPerRequest: 0, ...legacy(redisOptions ?? {}), commandTimeout: undefined },
    });
  } else client = new Redis({ ...base, ...legacy(config), commandTimeout: undefined });
  stallTolerantTimeouts(client, commandTimeoutMs);
  return { client, owned: true };
}

/** Closes a client politely, then forcibly if Redis does not answer. */
export async function closeRedis(client: RedisClient, timeoutMs = 1000): Promise<void> {
  if (client.status === 'end') return;
  let timer: NodeJS.Timeout | undefined;
  // Auto-pipelined commands leave at the end of the loop's turn they were asked in (ioredis defers them
  // with setImmediate), or once the pipeline before them is answered; QUIT is never pipelined: sent at
  // once, it would overtake them and they would fail with "Connection is closed".
  const until = Date.now() + timeoutMs;
  while (client.autoPipelineQueueSize > 0 && client.status === 'ready' && Date.now() < until) await sleep(1);
  try {
    await Promise.race([client.quit().catch(() => undefined), new Promise((r) => (timer = setTimeout(r, timeoutMs)))]);
  } finally {
    clearTimeout(timer);
    client.disconnect();
  }
}

/** Defines every in-flight script on a client (ioredis then sends EVALSHA, loading a script once if Redis lacks it). */
export function defineScripts(client: RedisClient): void {
  for (const [name, def] of Object.entries(scripts)) client.defineCommand(name, def);
}

/** Runs one of the scripts {@link defineScripts} defined on `client`. */
export function runScript(client: RedisClient, name: ScriptName, ...args: (string | number)[]): Promise<unknown> {
  const fn = (client as unknown as Record<ScriptName, Invoke>)[name];
  return fn.apply(client, args);
}
