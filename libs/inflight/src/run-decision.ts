// A claimed call as the tracker holds it, what the tracker decides for a delivery, and the decision
// to run it (which doubles as the run's ctx.once ledger): call-tracker.ts makes the decisions.
import type { Abortable, EffectLedger, EffectStart, RunInfo, RunningCall } from '@warren/calls';

/** What to do with a delivered request, decided before its handler runs (the first half of `StoreCallTracker.run`). */
export type Decision =
  /** Run the handler (unless the call's signal has fired meanwhile); `release` is called once whatever happens. */
  | (RunInfo & { readonly action: 'run'; release(): void })
  /** Do not run: reply with this text (a stored answer as it was stored, or a cancelled call's answer). */
  | { readonly action: 'answer'; readonly text: string }
  /** Do not run; reply with this text and dead-letter the request (every allowed attempt lost its worker). */
  | { readonly action: 'dead-letter'; readonly text: string; readonly attempts: number }
  /** Do not run now: its worker was lost and its method has a retry policy; it waits `delayMs` in a delay queue as attempt `nextAttempt`. */
  | { readonly action: 'retry'; readonly nextAttempt: number; readonly delayMs: number; readonly nextTryAt: number };

/** A call this instance claimed and runs. */
export interface Claim {
  readonly call: RunningCall;
  readonly token: string;
  readonly controller: Abortable;
  renewedAt: number;
  /** `finish` was called: release needs no script. */
  finished: boolean;
  /** Another worker took the call over while it still ran here. */
  lost: boolean;
  /** Gives back its place in the suspect lane: leaves it, or ends its turn alone. */
  readonly free: () => void;
}

/** The `ctx.once` ledger of a tracker's claims (once-ledger.ts). */
export interface ClaimEffects {
  start(claim: Claim, name: string): Promise<EffectStart>;
  complete(claim: Claim, name: string, json: string): Promise<void>;
  forget(claim: Claim, name: string): Promise<void>;
}

/** What a run decision asks of its tracker: to release the claim, and its effects ledger. */
export interface RunOwner {
  release(claim: Claim): void;
  readonly once: ClaimEffects;
}

/**
 * The decision to run a claimed call, and the ledger of its `ctx.once`
 * effects. A class, so that its methods are on the prototype rather than
 * closures made for every call.
 */
export class RunDecision implements EffectLedger {
  readonly action = 'run';
  constructor(readonly attempt: number, private readonly claim: Claim, private readonly owner: RunOwner) {}

  get effects(): EffectLedger {
    return this;
  }

  release(): void {
    this.owner.release(this.claim);
  }

  start(name: string): Promise<EffectStart> {
    return this.owner.once.start(this.claim, name);
  }

  complete(name: string, json: string): Promise<void> {
    return this.owner.once.complete(this.claim, name, json);
  }

  forget(name: string): Promise<void> {
    return this.owner.once.forget(this.claim, name);
  }
}
