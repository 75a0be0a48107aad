/**
 * The tracker port lives in @warren/calls, so a tracker (@warren/inflight)
 * needs no AMQP; re-exported here for code that imports it from the runtime.
 */
export {
  trackingStates, outcomeOf, type CallTracker, type CallInfo, type RunningCall, type RunInfo, type Executed, type TrackedOutcome, type Settle,
  type DeadLetterSettle, type TrackingReport,
} from '@warren/calls';
