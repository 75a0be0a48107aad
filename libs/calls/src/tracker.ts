import type { ResponseMessage } from '@warren/jsonrpc';
import type { Abortable } from './abortable';
import type { RunningCall } from './call-info';
import type { EffectLedger } from './effects';
import type { Isolation } from './isolation';
import type { Progress } from './progress';

/** What a run of a call is, as the tracker decided it. */
export interface RunInfo {
  /** Which run this is (the tracker's count; the delivery's own when untracked). */
  readonly attempt: number;
  /** Where this run's `ctx.once` effects are kept; without it they run on every attempt. */
  readonly effects?: EffectLedger;
}

/** Why a request is given up, carried to the dead-letter queue (docs/protocol-jobs.md, "Dead letters"). */
export interface DeadLetterSettle {
  /** A short word: `worker_lost`, `retries_exhausted`, `unservable`, ... */
  readonly reason: string;
  /** The JSON-RPC error code the caller was answered with, if any. */
  readonly code?: number;
  /** How many attempts ran before it was given up. */
  readonly attempts: number;
}

/** What running a call's handler came to (what `execute` returns). */
export type Executed =
  /**
   * An answer (the handler's, or the abort's when the call's signal fired first): `text` is the reply
   * serialized once (undefined: nothing to send, e.g. a batch of notifications); `response` the single
   * answer, for its stored state and code; `deadLetter` when the request is also given up.
   */
  | { readonly kind: 'answer'; readonly text: string | undefined; readonly response: ResponseMessage | undefined; readonly deadLetter?: DeadLetterSettle }
  /** A retryable failure under the method's retry policy: the next attempt runs after `delayMs` (at `nextTryAt`). */
  | { readonly kind: 'retry'; readonly delayMs: number; readonly nextAttempt: number; readonly nextTryAt: number }
  /** Shut down mid-run: give the request back to the queue. */
  | { readonly kind: 'requeue' };

/** How the runtime settles the delivery of a request. */
export type Settle =
  | { readonly action: 'ack' }
  | ({ readonly action: 'dead-letter' } & DeadLetterSettle)
  | { readonly action: 'requeue' }
  /** Publish the request to the delay queue of `delayMs` as attempt `nextAttempt`, then ack it. */
  | { readonly action: 'retry'; readonly delayMs: number; readonly nextAttempt: number };

/** What came of a call, and what the runtime does next: publish `reply`, then (after `stored`) settle. */
export interface TrackedOutcome {
  /** The reply to the caller as JSON text, published as it is (a stored answer is its stored text); undefined: none. */
  readonly reply: string | undefined;
  readonly settle: Settle;
  /** `run`: a handler ran here; `store`: answered or given up from the store, without running. */
  readonly source: 'run' | 'store';
  /**
   * Resolves (never rejects) once the outcome is stored. The reply goes out at once; the delivery is
   * settled only after this, so a redelivery finds the outcome. Absent: settle at once.
   */
  readonly stored?: Promise<void>;
}

/** The states a tracking report can be in; an announced report in any other is dropped. */
export const trackingStates = ['connecting', 'tracking', 'degraded', 'closed'] as const;

/** What an instance announces of its tracker. */
export interface TrackingReport {
  /** `tracking`: calls are tracked; `connecting` and `degraded`: the store is not answering and calls run untracked. */
  readonly state: (typeof trackingStates)[number];
  /** When the state began, ms since the epoch. */
  readonly since: number;
  /** Times tracking went from working to degraded. */
  readonly degradedTransitions: number;
  /** Calls run (or refused, when tracking is required) without tracking. */
  readonly untracked: number;
}

/**
 * The port through which a service runtime lets an in-flight store (Redis, in
 * @warren/inflight) watch over the requests it runs. The runtime works without
 * one, and keeps working when one fails: a failing store means "untracked",
 * never "fail the call", unless the tracker itself answers so.
 */
export interface CallTracker {
  /**
   * Runs one delivered request under tracking: decides whether it runs here (claim, wait for a live
   * owner, take a dead one's call over alone, answer from the store, give it up), calls `execute` at
   * most once, records what came of it, and says what to reply and how to settle. Rejects only with
   * what `execute` threw.
   */
  run(call: RunningCall, abort: Abortable, execute: (run: RunInfo) => Promise<Executed>): Promise<TrackedOutcome>;
  /** Stores a running call's latest progress on its record (already throttled by the runtime). */
  progress?(call: RunningCall, progress: Progress): Promise<void>;
  /** How tracking goes on this instance; announced with it (discovery, the broker's /services and metrics). */
  report?(): TrackingReport;
  /** Tells `listener` whenever the report's state changes, so the instance announces it at once. */
  onReportChange?(listener: () => void): void;
  /**
   * Tells the tracker the instance is up (heartbeats) and which calls it runs; closed on shutdown.
   * `isolation` is the instance's suspect lane: the tracker claims calls through it, and runs a call
   * whose previous worker died only alone.
   */
  start?(info: { service: string; instanceId: string; running: () => number; isolation?: Isolation }): Promise<void>;
  stop?(): Promise<void>;
}
