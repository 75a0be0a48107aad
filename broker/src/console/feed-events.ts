import type { GatewayCall } from '../gateway-calls';
import type { FedCall, ListDelta } from './inflight-delta';
import type { Outcome } from './outcomes';
import type { ThroughputSnapshot } from './throughput';

/**
 * The payloads of the console feed's server-sent events (feed.ts), one type per event name. The
 * console's browser code imports these types (`import type`, nothing at run time), so the page and
 * the broker cannot drift apart.
 */

/** What every `inflight` and `inflight-delta` event starts with. */
export interface InflightHead {
  /** When the watcher read the store, ms since the epoch (the broker's clock). */
  readonly at: number;
  /** An in-flight store is configured (without one, only the gateway's own calls are listed). */
  readonly configured: boolean;
  /** Set when the store did not answer this tick. */
  readonly error?: string;
  /**
   * More frames of this tick's list follow (a long list goes in frames of bounded size): the page
   * may wait for the last one before it redraws.
   */
  readonly more?: boolean;
}

/** `inflight`: a newcomer's first frame of the calls in flight, the cluster's and the gateway's own (the rest follow as deltas while `more`). */
export interface InflightEvent extends InflightHead {
  readonly calls: readonly FedCall[];
  readonly gateway: readonly GatewayCall[];
}

/** `inflight-delta`: every tick after that, the calls new or changed, and the ids gone. */
export interface InflightDeltaEvent extends InflightHead {
  readonly calls: ListDelta<FedCall>;
  readonly gateway: ListDelta<GatewayCall>;
}

/** `outcomes`: calls that finished since the last tick; `reset` on the first, which carries the recent history. */
export interface OutcomesEvent {
  readonly reset?: boolean;
  readonly items: readonly Outcome[];
}

/** `hello`: the feed's settings, sent first. */
export interface HelloEvent {
  readonly pollMs: number;
  readonly bucketMs: number;
  readonly inflight: boolean;
  readonly now: number;
}

/** `catalogue`: the set of services, instances or methods changed (fetch /services again). */
export interface CatalogueEvent {
  readonly version: number;
}

/** Every event the feed sends, by name. */
export interface FeedEvents {
  readonly hello: HelloEvent;
  readonly inflight: InflightEvent;
  readonly 'inflight-delta': InflightDeltaEvent;
  readonly outcomes: OutcomesEvent;
  readonly throughput: ThroughputSnapshot;
  readonly catalogue: CatalogueEvent;
}
