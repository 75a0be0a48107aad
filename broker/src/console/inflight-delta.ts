import type { GatewayCall } from '../gateway-calls';
import type { ClusterCall } from '../inflight';

/** A keyed list's change since the previous tick: entries new or changed, and ids gone. */
export interface ListDelta<T> {
  readonly upsert: readonly T[];
  readonly remove: readonly string[];
}

/** A keyed list's change as JSON, for the feed's frames: each entry new or changed as `[id, its JSON]`, and ids gone. */
export interface KeyedChanges {
  readonly upsert: ReadonlyArray<readonly [string, string]>;
  readonly remove: readonly string[];
}

/** The feed's calls as the browser keeps them: without `ageMs` and `leaseUntil` (see {@link fed}). */
export type FedCall = ClusterCall;

/**
 * What changed in the calls in flight since the last tick, so the feed sends a browser only that
 * (`inflight-delta`) rather than every call every tick: under 1,000 calls in flight a full list is
 * ~300 KB per tick to serialize, send and parse, and most ticks change a few calls. A browser that
 * connects gets the whole list (in frames of bounded size, feed-client.ts), then the deltas.
 * Each entry is serialized once per tick here, and the frames are built from that JSON.
 *
 * @example
 * const diff = new InflightDiff();
 * diff.next(calls, gateway);       // { calls: { upsert: [[id, json], ...], remove: [] }, gateway: … }
 * diff.snapshot();                  // the lists as they are now (as upserts), for a newcomer
 */
export class InflightDiff {
  private calls = new KeyedDiff<FedCall>();
  private gateway = new KeyedDiff<GatewayCall>();

  /** Takes this tick's lists; answers what changed since the previous one. */
  next(calls: readonly ClusterCall[], gateway: readonly GatewayCall[]): { calls: KeyedChanges; gateway: KeyedChanges } {
    return { calls: this.calls.next(calls.map(fed)), gateway: this.gateway.next(gateway) };
  }

  /** The lists as of the last `next`, as changes from nothing. */
  snapshot(): { calls: KeyedChanges; gateway: KeyedChanges } {
    return { calls: this.calls.current(), gateway: this.gateway.current() };
  }

  /** Forgets everything (nobody listens any more). */
  reset(): void {
    this.calls = new KeyedDiff();
    this.gateway = new KeyedDiff();
  }
}

/** `ageMs` and `leaseUntil` are left out: they move every tick and heartbeat (every call would change every tick), and the page counts ages from `startedAt`. */
function fed(call: ClusterCall): FedCall {
  const { ageMs: _age, leaseUntil: _lease, ...rest } = call;
  return rest;
}

/** One list keyed by call id, compared entry by entry through its JSON. */
class KeyedDiff<T extends { readonly callId: string }> {
  private last = new Map<string, { readonly item: T; readonly json: string }>();

  next(items: readonly T[]): KeyedChanges {
    const now = new Map<string, { readonly item: T; readonly json: string }>();
    const upsert: Array<readonly [string, string]> = [];
    for (const item of items) {
      const json = JSON.stringify(item);
      now.set(item.callId, { item, json });
      if (this.last.get(item.callId)?.json !== json) upsert.push([item.callId, json]);
    }
    const remove = [...this.last.keys()].filter((id) => !now.has(id));
    this.last = now;
    return { upsert, remove };
  }

  current(): KeyedChanges {
    return { upsert: [...this.last].map(([id, e]) => [id, e.json] as const), remove: [] };
  }
}
