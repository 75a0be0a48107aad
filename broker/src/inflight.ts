/**
 * One call in flight somewhere in the cluster, as GET /inflight shows it.
 * Shaped after @warren/amqp's TrackedCall (what a service reports to its
 * tracker) plus whatever the store adds; values must be JSON.
 */
export interface InflightCall {
  readonly callId: string;
  readonly method: string;
  readonly service?: string;
  readonly instanceId?: string;
  readonly attempt?: number;
  /** Absolute deadline, ms since the epoch. */
  readonly deadline?: number;
  /** ms since the epoch. */
  readonly startedAt?: number;
  readonly [extra: string]: unknown;
}

/**
 * The port through which GET /inflight reads calls in flight across the
 * cluster. @warren/inflight's Redis store is meant to implement it; the
 * gateway works without one and then shows only its own calls.
 *
 * @example
 * const source: InflightSource = { list: async () => store.listInflight() };
 * await startBroker({ urls, inflight: source });
 */
export interface InflightSource {
  list(): Promise<readonly InflightCall[]>;
}
