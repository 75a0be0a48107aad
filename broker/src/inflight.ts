import type { CallInfo, Progress } from '@warren/calls';

/**
 * One call in flight somewhere in the cluster, as GET /inflight shows it: a
 * CallInfo (@warren/calls) as far as the store knows it, plus whatever the
 * store adds; values must be JSON. (Named apart from @warren/inflight's
 * `InflightCall`, the store's own entry, which fits this port.)
 *
 * `state`: `running`, or `retrying` (waiting in a delay queue for its next attempt, due at
 * `nextTryAt`), as @warren/inflight lists it; `progress`: the latest its handler reported.
 */
export type ClusterCall = Pick<CallInfo, 'callId' | 'method'> & Partial<CallInfo> & {
  readonly state?: string;
  readonly nextTryAt?: number;
  readonly progress?: Progress;
  readonly [extra: string]: unknown;
};

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
  list(): Promise<readonly ClusterCall[]>;
  /** One call's state and outcome; the console uses it to tell how calls that left the store ended. @default none: the console shows only the gateway's outcomes */
  status?(callId: string): Promise<InflightCallStatus>;
}

/** A call's state as the store tells it (after @warren/inflight's CallStatus). */
export interface InflightCallStatus {
  readonly callId: string;
  /** `done`, `failed`, `cancelled`, `expired` once finished; `running`, `queued`, `unknown`, ... before. */
  readonly state: string;
  readonly service?: string;
  readonly method?: string;
  readonly worker?: string;
  readonly attempt?: number;
  readonly startedAt?: number;
  readonly finishedAt?: number;
  readonly response?: { readonly error: { readonly code: number } } | { readonly result: unknown };
}
