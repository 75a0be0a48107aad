/**
 * @warren/calls — what a call is (one {@link CallInfo}) and the port through
 * which a service runtime lets a tracker watch over it ({@link CallTracker}).
 * See README.md.
 */
export type { CallInfo, RunningCall } from './call-info';
export type { JobState, JobStatus, JobStore } from './jobs';
export { trackingStates, type CallTracker, type RunInfo, type Executed, type TrackedOutcome, type Settle, type DeadLetterSettle, type TrackingReport } from './tracker';
export { outcomeOf } from './outcome';
export type { Abortable } from './abortable';
export type { Isolation } from './isolation';
export type { EffectLedger, EffectStart } from './effects';
export { decodeProgress, maxProgressMessageLength, progressOf, type Progress } from './progress';
