/** Counters a service keeps for metrics and tests. */
export interface ServiceStats {
  /** Handlers running now. */
  running: number;
  /** Requests answered (success or error). */
  answered: number;
  /** Requests this instance ran whose final answer was an error (a retried attempt is not counted; its last one is). */
  failed: number;
  /** Requests dropped unrun because their deadline had passed when dequeued. */
  expired: number;
  /** Messages dead-lettered (invalid bodies, attempts exhausted). */
  deadLettered: number;
  /** Notifications handled. */
  notified: number;
  /** Replies answered from the tracker's store instead of running the handler. */
  answeredFromStore: number;
  /** Attempts that failed with a retryable error and were sent to a delay queue for another try. */
  retried: number;
}

export function emptyStats(): ServiceStats {
  return { running: 0, answered: 0, failed: 0, expired: 0, deadLettered: 0, notified: 0, answeredFromStore: 0, retried: 0 };
}
