// A claimed call as the tracker holds it, and the decision to run it (which doubles as the run's
// ctx.once ledger): moved out of tracker.ts, which keeps the decisions themselves.
import type { Abortable, EffectLedger, EffectStart, RunningCall } from '@warren/calls';

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

/** What a run decision asks of its tracker. */
export interface RunOwner {
  release(claim: Claim): void;
  effectStart(claim: Claim, name: string): Promise<EffectStart>;
  effectComplete(claim: Claim, name: string, json: string): Promise<void>;
  effectForget(claim: Claim, name: string): Promise<void>;
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
    return this.owner.effectStart(this.claim, name);
  }

  complete(name: string, json: string): Promise<void> {
    return this.owner.effectComplete(this.claim, name, json);
  }

  forget(name: string): Promise<void> {
    return this.owner.effectForget(this.claim, name);
  }
}
