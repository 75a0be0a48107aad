import type { CallInfo } from '@warren/calls';
import type { Id, JsonValue, Params } from '@warren/jsonrpc';
import type { ProgressListener } from '../wire/progress';
import type { DelayOptions } from './delay-options';

// What a caller may say about one call, notification or batch of `RpcClient`, and what the client tells back.

export interface CallOptions extends DelayOptions {
  /** Time allowed for this call, counted from when it is due (see `delayMs`/`notBefore`). @default the client's defaultTimeoutMs */
  readonly timeoutMs?: number;
  /** An absolute deadline (ms since epoch) the call may not outlive, e.g. inherited from a parent call; must be after it is due. */
  readonly deadline?: number;
  /** Aborting settles the call with RpcAbortedError (and tells `onCancel`, which may cancel it remotely). */
  readonly signal?: AbortSignal;
  /** The JSON-RPC id to put in the body. @default a per-client counter */
  readonly id?: Exclude<Id, null>;
  /**
   * Parent trace context (W3C traceparent) the call continues. @default the active OpenTelemetry span's
   * when one is registered and active, else a new trace
   */
  readonly traceparent?: string;
  /** The W3C `tracestate` that goes with `traceparent`, carried on unchanged (dropped when malformed). @default none */
  readonly tracestate?: string;
  /** Persist this message to disk. @default the client's `persistent`; always for a delayed call */
  readonly persistent?: boolean;
  /**
   * Told of the call's progress as its handler reports it (`ctx.progress`): the request asks the
   * worker to push progress to this client's reply queue. Reports after the answer are dropped.
   * @default none (no progress is pushed)
   */
  readonly onProgress?: ProgressListener;
  /**
   * With an availability check installed: `fail` rejects at once with RpcNoConsumersError (-32002 on the
   * wire) when the service has no live consumer, `queue` leaves the request waiting for one (job-style). @default 'queue' if persistent, else 'fail'
   */
  readonly whenNoConsumer?: 'fail' | 'queue';
}

/** `timeoutMs` bounds the wait for RabbitMQ's confirm; a delayed notification is confirmed once it waits in the chain. */
export type NotifyOptions = Pick<CallOptions, 'timeoutMs' | 'traceparent' | 'tracestate' | 'persistent' | 'delayMs' | 'notBefore'> & {
  /**
   * A notification no queue is bound for (nobody subscribes to its method on the events exchange) is dropped by
   * RabbitMQ, which returns it (mandatory publish): `warn` logs a warning that names `enqueue` (a notification never
   * reaches a method's request queue); `fail` rejects with RpcNoRouteError (-32601) once it is confirmed. Not known
   * for a delayed notification (routed only when due). @default 'warn'
   */
  readonly ifUnrouted?: 'warn' | 'fail';
};

export type BatchEntry = { readonly method: string; readonly params?: Params; readonly notification?: boolean };
/** One entry per batch item, in request order; notifications are fulfilled with `undefined`. */
export type BatchResult = PromiseSettledResult<JsonValue | undefined>;

/** Turns an interface of async methods into one whose calls go over RabbitMQ. */
export type RpcProxy<T> = {
  [K in keyof T]: T[K] extends (...args: infer A) => infer R ? (...args: A) => Promise<Awaited<R>> : never;
};

export interface ClientStats {
  readonly pending: number;
  readonly buffered: number;
  readonly onWire: number;
  readonly lateReplies: number;
  readonly returned: number;
  /** Replies and progress dropped because they did not come from the RabbitMQ user `replyUsers` expects (forged). */
  readonly untrustedReplies: number;
}

/** Told when a caller gives up on a call (abort), so it can be cancelled where it runs. */
export type CancelListener = (callId: string) => void;

/** A request the client has taken and is sending (or holding while disconnected): a {@link CallInfo} (@warren/calls) before any worker has it. */
export type SentCall = CallInfo;

/** Told of every request as it is sent, e.g. to record it as queued before any worker takes it. */
export type SendListener = (call: CallInfo) => void;
/** How a call settled, as {@link RpcClient.onSettle} tells it. */
export type SettledListener = (callId: string, how: 'answered' | 'failed' | 'timeout' | 'aborted') => void;
