import type { Id } from '@warren/jsonrpc';

/**
 * One call, as every part of Warren sees it: the client sending it, a caller
 * marking it queued, the runtime handing it to a tracker, the view listing
 * it. The fields after `deadline` are known only from some point of its life
 * on (a caller may not know its service; nobody knows its worker before one
 * takes it).
 */
export interface CallInfo {
  /** The AMQP correlation id: unique per call, the key of its record. */
  readonly callId: string;
  readonly method: string;
  /** The JSON-RPC id in the request body. */
  readonly id: Id;
  /** Absolute deadline, ms since the epoch (the caller's). */
  readonly deadline: number;
  /** A delayed call: when it becomes due, ms since the epoch (it waits in RabbitMQ's delay chain until then). */
  readonly dueAt?: number;
  /** The service meant to run it. */
  readonly service?: string;
  /** The service instance running it (or that last did). */
  readonly worker?: string;
  /** Which run of the call this is, from 1. */
  readonly attempt?: number;
  /** When this attempt started, ms since the epoch. */
  readonly startedAt?: number;
  /** Attempts the call may have (its method's retry policy); the tracker's own bound when absent. */
  readonly maxAttempts?: number;
  /**
   * The waits of its method's retry policy, after each failed attempt (`[0]` after attempt 1): with
   * them, a call whose worker was lost waits in a delay queue before its next attempt (the tracker
   * settles it `retry`), as after a retryable error. Absent: taken over at once.
   */
  readonly retryDelaysMs?: readonly number[];
}

/** A {@link CallInfo} as the runtime hands a delivered request to its tracker: where and since when it runs are known. */
export type RunningCall = CallInfo & {
  readonly service: string;
  readonly worker: string;
  readonly attempt: number;
  readonly startedAt: number;
  /**
   * RabbitMQ delivers the request for the first time and it is no retry, so no run of the call can have
   * started anywhere: a tracker may start the handler while its claim is on the way (docs/reliability.md).
   */
  readonly firstDelivery?: boolean;
  /** The request's params as parsed, for a tracker to keep (bounded) for call detail. */
  readonly params?: unknown;
  /** The trace id of the request's `traceparent` header, if it carried a valid one. */
  readonly traceId?: string;
};
