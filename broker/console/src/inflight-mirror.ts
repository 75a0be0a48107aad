// The page's copy of the calls in flight, kept from the feed's first `inflight` event and the
// `inflight-delta` events after it (broker/src/console/inflight-delta.ts): a tick costs what
// changed, and a call that did not change keeps its object, so the rows showing it are not redrawn.
import type { ClusterCall, GatewayCall, InflightDelta, InflightEvent } from './types';

export class InflightMirror {
  private calls = new Map<string, ClusterCall>();
  private gateway = new Map<string, GatewayCall>();
  private seeded = false;

  /** The whole list (on connecting, and after every reconnect): replaces the copy. */
  full(event: InflightEvent): InflightEvent {
    this.calls = new Map(event.calls.map((c) => [c.callId, c]));
    this.gateway = new Map(event.gateway.map((g) => [g.callId, g]));
    this.seeded = true;
    return event;
  }

  /** A tick's changes; undefined before the first whole list (a delta alone cannot be shown). */
  delta(d: InflightDelta): InflightEvent | undefined {
    if (!this.seeded) return undefined;
    apply(this.calls, d.calls);
    apply(this.gateway, d.gateway);
    return { at: d.at, configured: d.configured, calls: [...this.calls.values()], gateway: [...this.gateway.values()], ...(d.error === undefined ? {} : { error: d.error }) };
  }
}

function apply<T extends { readonly callId: string }>(into: Map<string, T>, change: { readonly upsert: readonly T[]; readonly remove: readonly string[] }): void {
  for (const id of change.remove) into.delete(id);
  for (const item of change.upsert) into.set(item.callId, item);
}
