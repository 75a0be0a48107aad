import type { CallTracker } from '@warren/amqp';
import { createRedisTracker } from '@warren/inflight';

/**
 * The in-flight tracker behind the bench's "tracking on" figure: Redis at REDIS_URL, keys under the run's
 * namespace. `awaitClaimAlways`: every call waits for its claim's reply (the behaviour before first
 * deliveries started at once); passed untyped, so a base tree without the option still builds.
 */
export async function benchTracker(namespace: string, awaitClaimAlways = false): Promise<{ tracker: CallTracker; close: () => Promise<void> }> {
  const extra: Record<string, unknown> = awaitClaimAlways ? { awaitClaim: 'always' } : {};
  const tracker = createRedisTracker({ redis: process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379', keyPrefix: namespace, ...extra });
  return { tracker, close: () => tracker.close() };
}
