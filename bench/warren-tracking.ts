import type { CallTracker } from '@warren/amqp';

/**
 * The in-flight tracker the bench uses for its "tracking on" figure.
 * Wired to @warren/inflight once that package exists.
 */
export async function benchTracker(_namespace: string): Promise<{ tracker: CallTracker; close: () => Promise<void> } | undefined> {
  throw new Error('tracking target not wired yet: @warren/inflight is missing');
}
