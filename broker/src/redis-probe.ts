import { redisPing } from '@warren/inflight';
import type { ReadinessProbe } from './probes';

/** A readiness probe that holds a connection; `close()` ends it (the probe's owner calls it at shutdown). */
export interface RedisPingProbe extends ReadinessProbe {
  close(): void;
}

/**
 * A readiness probe that PINGs a Redis server, through @warren/inflight (the broker speaks no Redis
 * itself): one connection, opened at the first check and kept; a failed check drops it and the next
 * opens a new one; a check never waits past `timeoutMs`. Not required for readiness: in-flight
 * tracking is an aid, not a gate.
 *
 * @example
 * const redis = redisPingProbe('redis://127.0.0.1:6379');
 * await startBroker({ urls, probes: [redis] });
 * // at shutdown
 * redis.close();
 */
export function redisPingProbe(url: string, timeoutMs = 1000): RedisPingProbe {
  const redis = redisPing(url, timeoutMs);
  return {
    name: 'redis',
    required: false,
    // Concurrent checks are shared by sharedProbe (probe-cache.ts), which /readyz wraps every probe in.
    check: () => redis.ping(),
    close: () => redis.close(),
  };
}
