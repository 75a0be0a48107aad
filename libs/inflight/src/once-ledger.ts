// The tracker's `ctx.once` ledger: marks an effect started under the run's claim, stores its
// result, or forgets a start whose `fn` threw, in the store (once-scripts.ts, memory-effects.ts).
import type { EffectStart } from '@warren/calls';
import { ServiceUnavailableError } from '@warren/jsonrpc';
import { attempt } from './attempt';
import { resultTtlMs } from './keys';
import { effectMark, parseEffectStart } from './once-marks';
import type { ResolvedTrackerOptions } from './options';
import type { Claim, ClaimEffects } from './run-decision';
import type { TrackerStore } from './store-port';

const noop = (): void => undefined;

/** The effects of every claim one tracker runs; a run reaches it through its RunDecision. */
export class OnceLedger implements ClaimEffects {
  constructor(
    private readonly store: TrackerStore,
    private readonly o: Pick<ResolvedTrackerOptions, 'resultTtlMs' | 'requireTracking'>,
    /** The tracker's failure report (degraded mode, or a script bug logged). */
    private readonly failed: (err: unknown, op: string) => void,
  ) {}

  start(claim: Claim, name: string): Promise<EffectStart> {
    const ttlMs = resultTtlMs(claim.call.deadline, Date.now(), this.o.resultTtlMs);
    return attempt(() => this.store.effectStart(claim.call.callId, name, effectMark(claim.token), ttlMs)).then(parseEffectStart, (err: unknown) => {
      this.failed(err, 'effect start');
      // Like a call while Redis is away: unprotected, unless tracking is required.
      if (this.o.requireTracking) throw new ServiceUnavailableError(undefined, { reason: 'tracking_unavailable' });
      return { kind: 'run' } as const;
    });
  }

  complete(claim: Claim, name: string, json: string): Promise<void> {
    const ttlMs = resultTtlMs(claim.call.deadline, Date.now(), this.o.resultTtlMs);
    // Not stored: a later run finds the start mark and reports the effect interrupted, rather than running it again.
    return attempt(() => this.store.effectComplete(claim.call.callId, name, json, ttlMs)).then(noop, (err: unknown) => this.failed(err, 'effect complete'));
  }

  forget(claim: Claim, name: string): Promise<void> {
    return attempt(() => this.store.effectForget(claim.call.callId, name, effectMark(claim.token))).then(noop, (err: unknown) => this.failed(err, 'effect forget'));
  }
}
