import { Redis, type RedisOptions } from 'ioredis';
import { stallTolerantTimeouts } from './timeouts';

/**
 * ioredis's options, with the command timeout Warren arms itself in place of ioredis's own; replies keep
 * ioredis's default ('legacy', RESP2-shaped) mapping, which the stores' code reads.
 */
export interface RedisClientOptions extends Omit<RedisOptions, 'commandTimeout' | 'replyMapping'> {
  /** A command Redis has not answered in this time fails with "Command timed out" ({@link stallTolerantTimeouts}). */
  readonly commandTimeoutMs: number;
}

/**
 * A single-node ioredis client for `url` whose command timeout a blocked event loop cannot fake
 * ({@link stallTolerantTimeouts}); every other option is ioredis's.
 *
 * @example
 * const redis = createRedis('redis://127.0.0.1:6379', { commandTimeoutMs: 2000, lazyConnect: true, maxRetriesPerRequest: 1 });
 */
export function createRedis(url: string, options: RedisClientOptions): Redis {
  const { commandTimeoutMs, ...rest } = options;
  // A commandTimeout slipped in by a caller (untyped options) would still fail stalled replies: dropped.
  const client = new Redis(url, { ...rest, commandTimeout: undefined });
  stallTolerantTimeouts(client, commandTimeoutMs);
  return client;
}
