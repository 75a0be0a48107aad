// What the views are given: the live feed's state and its latest events. Its own module, one layer
// below main.tsx and the views, so neither imports the other.
import type { FeedState } from './feed';
import type { InflightEvent, Outcome, ThroughputSnapshot } from './types';

export interface Live {
  readonly feed: FeedState;
  readonly inflight?: InflightEvent;
  readonly outcomes: readonly Outcome[];
  readonly throughput?: ThroughputSnapshot;
  readonly catalogueVersion: number;
}

/** Whether what the views show is old news: the feed delivered data once, and is not live now. */
export function isStale(live: Live): boolean {
  return live.inflight !== undefined && live.feed !== 'live';
}
