// What a service tells an observer about each request it settles, from the
// same places that count ServiceStats, so metrics and stats cannot disagree.
// A structural port: the runtime knows no metrics library (worker-metrics.ts
// is the prom-client adapter the mains use).

/**
 * How one delivered request ended on this instance:
 * `ok` / `error` answered (with a result / an error); `retried` sent to a delay
 * queue for another attempt; `expired` dropped unrun (deadline passed in the
 * queue); `dead_lettered` given up to the dead-letter queue (after being
 * answered, if it was); `requeued` given back (shutdown); `from_store`
 * answered from the tracker's store without running.
 */
export type RequestOutcome = 'ok' | 'error' | 'retried' | 'expired' | 'dead_lettered' | 'requeued' | 'from_store';

/** One settled request. */
export interface SettledRequest {
  /** The method, or `''` for a batch or a body that is no request. */
  readonly method: string;
  readonly outcome: RequestOutcome;
  /** The JSON-RPC error code answered, when the answer was an error. */
  readonly code?: number;
  /** Delivery to settle (tracking and handler), seconds; absent when nothing ran (expired, unservable). */
  readonly handlerSeconds?: number;
  /**
   * Caller's publish (`x-warren-sent`, first attempt) to this delivery, seconds; absent when the
   * caller sent no timestamp. Across hosts it includes their clock skew (clamped at 0).
   */
  readonly queueWaitSeconds?: number;
}

/** Told of every request a service settles. Must not throw (it runs on the delivery path). */
export interface ServiceObserver {
  settled(request: SettledRequest): void;
}
