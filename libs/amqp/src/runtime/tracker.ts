import type { Abortable } from './call-abort';
import type { EffectLedger } from './once';
import type { Isolation } from './suspect-lane';
import type { Id, ResponseMessage } from '@warren/jsonrpc';
import type { Progress } from '../wire/progress';

/** What the service runtime tells a tracker about a delivered request. */
export interface TrackedCall {
  readonly callId: string;
  /** The request's JSON-RPC id: the tracker answers with it when it answers without running the handler. */
  readonly id: Id;
  readonly method: string;
  readonly service: string;
  readonly instanceId: string;
  readonly attempt: number;
  readonly deadline: number;
  readonly startedAt: number;
  /** Attempts the call may have (its method's retry policy); the tracker's own bound when absent. */
  readonly maxAttempts?: number;
  /**
   * The waits of its method's retry policy, after each failed attempt (`[0]` after attempt 1): with
   * them, a call whose worker was lost waits in a delay queue before its next attempt (the tracker
   * answers `retry`), as after a retryable error. Absent: taken over at once.
   */
  readonly retryDelaysMs?: readonly number[];
}

/** What to do with a delivered request, decided before its handler runs. */
export type TrackDecision =
  /** Run the handler (unless the call's signal has fired meanwhile); `release` is called once whatever happens. */
  | {
    readonly action: 'run';
    readonly attempt: number;
    readonly release: () => void;
    /** Where this run's `ctx.once` effects are kept; without it they run on every attempt. */
    readonly effects?: EffectLedger;
  }
  /** Do not run: answer with this stored response (a redelivery of a finished call, or a cancelled one). */
  | { readonly action: 'answer'; readonly response: ResponseMessage }
  /** Do not run and do not answer; dead-letter it with this answer to the caller (attempts exhausted). */
  | { readonly action: 'dead-letter'; readonly response: ResponseMessage }
  /**
   * Do not run now: its previous worker was lost and its method has a retry policy. Publish it to the
   * delay queue for `delayMs` as attempt `attempt`, then ack; the record says `retrying` until `nextTryAt`.
   */
  | { readonly action: 'retry'; readonly attempt: number; readonly delayMs: number; readonly nextTryAt: number };

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
 * The port through which the service runtime reports calls to an in-flight
 * store (Redis, in @warren/inflight). The runtime works without one, and keeps
 * working when one fails: every method may reject, and a rejection means
 * "untracked", never "fail the call" unless the tracker itself answers so.
 */
export interface CallTracker {
  begin(call: TrackedCall, abort: Abortable): Promise<TrackDecision>;
  /**
   * Records the outcome; runs before the reply is published, so a redelivery finds it. `text` is the
   * response as the caller receives it (serialized once, by the runtime).
   */
  finish(call: TrackedCall, response: ResponseMessage, text: string): Promise<void>;
  /** Stores a running call's latest progress on its record (already throttled by the runtime). */
  progress?(call: TrackedCall, progress: Progress): Promise<void>;
  /**
   * The attempt failed and the call waits in a delay queue until `nextTryAt` (ms since the epoch):
   * the record says `retrying`, keeps the attempt, and the next delivery takes it as attempt + 1.
   */
  retrying?(call: TrackedCall, nextTryAt: number): Promise<void>;
  /** How tracking goes on this instance; announced with it (discovery, the broker's /services and metrics). */
  report?(): TrackingReport;
  /** Tells `listener` whenever the report's state changes, so the instance announces it at once. */
  onReportChange?(listener: () => void): void;
  /**
   * Tells the tracker the instance is up (heartbeats) and which calls it runs; closed on shutdown.
   * `isolation` is the instance's suspect lane (suspect-lane.ts): the tracker claims calls through it,
   * and runs a call whose previous worker died only alone.
   */
  start?(info: { service: string; instanceId: string; running: () => number; isolation?: Isolation }): Promise<void>;
  stop?(): Promise<void>;
}
