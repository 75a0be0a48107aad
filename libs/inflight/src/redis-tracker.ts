import { StoreCallTracker } from './call-tracker';
import { trackerLogger } from './claim-decisions';
import { keys } from './keys';
import { resolveTrackerOptions, type TrackerOptions } from './options';
import { RedisStore } from './redis-store';

/**
 * A tracker for one service instance, on a Redis connection of its own.
 * Pass it as `tracker` to `startService`; the service starts and stops it.
 *
 * @example
 * const tracker = createRedisTracker({ redis: process.env.REDIS_URL, keyPrefix: 'warren' });
 */
export function createRedisTracker(options: TrackerOptions = {}): StoreCallTracker {
  const o = resolveTrackerOptions(options);
  // Auto-pipelining off: the tracker's hot-path scripts are batched per tick already (redis-store.ts).
  const store = new RedisStore(o.redis, o.commandTimeoutMs, keys(o.keyPrefix), trackerLogger(o), { autoPipelining: false, history: o.history });
  return new StoreCallTracker(options, store);
}
