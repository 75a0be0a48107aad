import type { CallTracker } from '@warren/amqp';
import { createRedisTracker } from '@warren/inflight';

/** The in-flight tracker behind the bench's "tracking on" figure: Redis at REDIS_URL, keys under the run's namespace. */
export async function benchTracker(namespace: string): Promise<{ tracker: CallTracker; close: () => Promise<void> }> {
  const tracker = createRedisTracker({ redis: process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379', keyPrefix: namespace });
  return { tracker, close: () => tracker.close() };
}
