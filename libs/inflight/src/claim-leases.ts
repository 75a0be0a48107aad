// The claims one tracker runs, their leases (renewed on the tracker's one timer), and the cancels
// and cancel marks that abort them: call-tracker.ts decides and records, this keeps claims alive.
import type { Abortable, RunningCall } from '@warren/calls';
import { CancelledError } from '@warren/jsonrpc';
import type { Logger } from '@warren/logger';
import type { Health } from './health';
import { maxListedCalls } from './record-codec';
import type { Claim } from './run-decision';
import type { TrackerStore } from './store-port';

/** Most cancels kept for calls not (yet) claimed here; past it a cancel is still caught by the next lease renewal. */
export const maxEarlyCancels = 10_000;

export class ClaimLeases {
  /**
   * The claims running here, by call id (cancels, renewals, finish). No WeakMap on the hot path: its
   * ephemerons cost every scavenge.
   */
  readonly byCall = new Map<string, Claim>();
  /** Cancels that arrived before the claim they are for was registered here: callId → forget-after time. */
  private readonly earlyCancels = new Map<string, number>();
  /**
   * Until when a cancel mark that did not fit in `earlyCancels` lives (0: none was dropped). Until then no
   * first delivery starts before its claim's reply, since it could be the one a dropped mark was for.
   */
  private marksOverflowUntil = 0;

  constructor(
    private readonly store: TrackerStore,
    private readonly leaseMs: number,
    private readonly status: Health,
    private readonly log: Logger,
    /** The tracker's failure report (degraded mode, or a script bug logged). */
    private readonly failed: (err: unknown, op: string) => void,
  ) {}

  /** A claim this instance runs from now on, found by its call id. */
  register(call: RunningCall, token: string, controller: Abortable, free: () => void): Claim {
    const claim: Claim = { call, token, controller, renewedAt: Date.now(), finished: false, lost: false, free };
    this.byCall.set(call.callId, claim);
    return claim;
  }

  /** Forgets a claim (released), unless a later claim of the same call took its place. */
  unregister(claim: Claim): void {
    if (this.byCall.get(claim.call.callId) === claim) this.byCall.delete(claim.call.callId);
  }

  /** Call ids for the heartbeat entry (bounded). */
  listed(): string[] {
    return [...this.byCall.keys()].slice(0, maxListedCalls);
  }

  /** A cancel heard for this call before its claim was registered here. */
  cancelledEarly(callId: string): boolean {
    return this.earlyCancels.has(callId);
  }

  /** Takes the early cancel of a call (it has served: its claim is aborted or answered); true if there was one. */
  takeEarlyCancel(callId: string): boolean {
    return this.earlyCancels.delete(callId);
  }

  onCancel(callId: string, markTtlMs?: number): void {
    const claim = this.byCall.get(callId);
    if (claim) {
      this.abort(claim);
      return;
    }
    // The cancel can overtake the claim's own reply on the other connection: remember it briefly (bounded). A
    // mark is remembered as long as it lives, so a first delivery of its call waits for the claim (run).
    const until = Date.now() + (markTtlMs ?? this.leaseMs);
    if (this.earlyCancels.size < maxEarlyCancels || this.earlyCancels.has(callId)) this.earlyCancels.set(callId, Math.max(until, this.earlyCancels.get(callId) ?? 0));
    else if (markTtlMs !== undefined) this.marksOverflowUntil = Math.max(this.marksOverflowUntil, until);
  }

  /** No cancel mark was dropped for want of room, or every dropped one has expired. */
  everyMarkKept(): boolean {
    if (this.marksOverflowUntil === 0) return true;
    if (Date.now() < this.marksOverflowUntil) return false;
    this.marksOverflowUntil = 0;
    return true;
  }

  abort(claim: Claim): void {
    if (claim.controller.signal.aborted) return;
    this.status.count('cancelled');
    claim.controller.abort(new CancelledError());
  }

  /** Drops the early cancels whose time is up (the tracker's tick). */
  sweep(now: number): void {
    for (const [callId, until] of this.earlyCancels) if (until < now) this.earlyCancels.delete(callId);
  }

  /** Renews, in one batch (pipelined), the leases of calls that have run for a third of a lease since the last renewal. */
  async renewDue(): Promise<void> {
    const now = Date.now();
    const due = [...this.byCall.values()].filter((c) => !c.finished && !c.lost && now - c.renewedAt >= this.leaseMs / 3);
    await Promise.all(due.map(async (claim) => {
      claim.renewedAt = now;
      try {
        const outcome = await this.store.renew(claim.call.callId, claim.token, this.leaseMs);
        if (outcome === 1) this.abort(claim);
        else if (outcome === -1 && !claim.finished) {
          claim.lost = true;
          this.status.count('leasesLost');
          this.log.warn({ callId: claim.call.callId }, 'lease lost while the handler still runs: another worker took the call over');
        }
      } catch (err) {
        this.failed(err, 'renew');
      }
    }));
  }
}
