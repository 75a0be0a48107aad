/**
 * Local errors: failures on the caller's side of a call (its deadline passed,
 * the reply path was lost, a bound was hit, the client is closing, the broker
 * did not take the request...). They are never serialized: each has a string
 * `code`, a `cause` and a `retryable` flag, and `toWireError` (map-errors.ts)
 * is the one place that says which JSON-RPC error a gateway or relay answers
 * for it. Transport-neutral on purpose (no AMQP words in the codes' meaning
 * beyond "the request was not taken"), so every engine and transport shares
 * them. Table: docs/errors.md "Local errors".
 */

/** Every local error code; docs/errors.md lists each (a unit test checks). */
export const LocalErrorCode = {
  Timeout: 'RPC_TIMEOUT',
  Aborted: 'RPC_ABORTED',
  ConnectionLost: 'RPC_CONNECTION_LOST',
  ReplyQueueLost: 'RPC_REPLY_QUEUE_LOST',
  PendingLimit: 'RPC_PENDING_LIMIT',
  BufferFull: 'RPC_BUFFER_FULL',
  ShuttingDown: 'RPC_SHUTTING_DOWN',
  NotConfirmed: 'RPC_NOT_CONFIRMED',
  NoRoute: 'RPC_NO_ROUTE',
  NoConsumers: 'RPC_NO_CONSUMERS',
  TooLarge: 'RPC_TOO_LARGE',
  InvalidMethod: 'RPC_INVALID_METHOD',
  UnreadableReply: 'RPC_UNREADABLE_REPLY',
} as const;
export type LocalErrorCodeValue = (typeof LocalErrorCode)[keyof typeof LocalErrorCode];

interface LocalOptions {
  readonly cause?: unknown;
}

/** The base of the local family; narrow with `isLocalError` and `switch (err.code)`. */
export abstract class LocalRpcError extends Error {
  abstract readonly code: LocalErrorCodeValue;
  /** True when the call certainly did not run, so sending it again cannot make things worse. */
  abstract readonly retryable: boolean;
  constructor(message: string, options?: LocalOptions) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
  }
}

/** The deadline passed before an answer; `noTimeLeft`: it had passed before the call was made. */
export class RpcTimeoutError extends LocalRpcError {
  override readonly name = 'RpcTimeoutError';
  readonly code = LocalErrorCode.Timeout;
  readonly retryable = false;
  constructor(readonly noTimeLeft = false, options?: LocalOptions) {
    super(noTimeLeft ? 'Deadline already passed' : 'Deadline exceeded', options);
  }
}

/** The caller aborted the call (its AbortSignal); `reason` is the abort reason's text. */
export class RpcAbortedError extends LocalRpcError {
  override readonly name = 'RpcAbortedError';
  readonly code = LocalErrorCode.Aborted;
  readonly retryable = false;
  constructor(readonly reason?: string, options?: LocalOptions) {
    super('Aborted by the caller', options);
  }
}

/** Why a reply path was lost; the call may or may not have run. */
/** `broker_restarted`: the client reconnected to a new incarnation of the broker, which lost the plain requests on the wire. */
export type ConnectionLostReason = 'connection_lost' | 'reply_channel_closed' | 'unconfirmed_at_disconnect' | 'not_connected' | 'broker_restarted';

export class RpcConnectionLostError extends LocalRpcError {
  override readonly name = 'RpcConnectionLostError';
  readonly code = LocalErrorCode.ConnectionLost;
  readonly retryable = false;
  constructor(readonly reason: ConnectionLostReason, options?: LocalOptions) {
    super(`Connection lost (${reason})`, options);
  }
}

/** The reply queue expired while the client was away: answers to calls on the wire are gone. */
export class RpcReplyQueueLostError extends LocalRpcError {
  override readonly name = 'RpcReplyQueueLostError';
  readonly code = LocalErrorCode.ReplyQueueLost;
  readonly retryable = false;
  constructor(options?: LocalOptions) {
    super('Reply queue lost', options);
  }
}

/** `maxPending` calls are waiting already. */
export class RpcPendingLimitError extends LocalRpcError {
  override readonly name = 'RpcPendingLimitError';
  readonly code = LocalErrorCode.PendingLimit;
  readonly retryable = true;
  constructor(readonly limit: number, options?: LocalOptions) {
    super(`Too many pending calls (limit ${limit})`, options);
  }
}

/** Disconnected, and the offline buffer holds `maxBuffered` requests already. */
export class RpcBufferFullError extends LocalRpcError {
  override readonly name = 'RpcBufferFullError';
  readonly code = LocalErrorCode.BufferFull;
  readonly retryable = true;
  constructor(readonly limit: number, options?: LocalOptions) {
    super(`Offline buffer full (limit ${limit})`, options);
  }
}

/** The client is closing and takes no new calls (or failed the ones left at its close). */
export class RpcShuttingDownError extends LocalRpcError {
  override readonly name = 'RpcShuttingDownError';
  readonly code = LocalErrorCode.ShuttingDown;
  readonly retryable = true;
  constructor(options?: LocalOptions) {
    super('Shutting down', options);
  }
}

/** Why the broker did not take a message: nacked, not confirmed in time, the publish threw, or no channel. */
export type NotConfirmedReason = 'not_confirmed' | 'not_confirmed_in_time' | 'publish_failed' | 'not_connected';

export class RpcNotConfirmedError extends LocalRpcError {
  override readonly name = 'RpcNotConfirmedError';
  readonly code = LocalErrorCode.NotConfirmed;
  readonly retryable = true;
  constructor(readonly reason: NotConfirmedReason, options?: LocalOptions) {
    super(`Not taken by the broker (${reason})`, options);
  }
}

/** Where a request nobody serves was looked for, and what the caller may have meant (both only when known). */
export interface NoRouteOptions extends LocalOptions {
  /** The namespace whose request exchange returned it (the client's). */
  readonly namespace?: string;
  /** Methods the caller's directory knows that are close to the one asked for (no-route-hint.ts in @warren/amqp), nearest first. */
  readonly suggestions?: readonly string[];
}

/** Nothing is bound for the method: the broker returned the request (nobody serves it). */
export class RpcNoRouteError extends LocalRpcError {
  override readonly name = 'RpcNoRouteError';
  readonly code = LocalErrorCode.NoRoute;
  readonly retryable = false;
  readonly namespace: string | undefined;
  readonly suggestions: readonly string[] | undefined;
  constructor(readonly method: string, options?: NoRouteOptions) {
    super(noRouteText(method, options?.namespace, options?.suggestions), options);
    this.namespace = options?.namespace;
    this.suggestions = options?.suggestions;
  }
}

/** `"ad" is served by nobody in namespace "warren"; did you mean "add"?`: the part after -32601's "Method not found: ". */
function noRouteText(method: string, namespace?: string, suggestions?: readonly string[]): string {
  const where = namespace === undefined ? '' : ` in namespace ${JSON.stringify(namespace)}`;
  const hint = suggestions && suggestions.length > 0 ? `; did you mean ${suggestions.map((m) => JSON.stringify(m)).join(' or ')}?` : '';
  return `${JSON.stringify(method)} is served by nobody${where}${hint}`;
}

/** The method's service has no live consumer (an availability check said so before sending). */
/**
 * Why a served method's call cannot be taken now: `no_consumers`, its queue has no live consumer (an availability
 * check said so before sending); `queue_unavailable`, RabbitMQ returned the request although a service serves the
 * method (its queue cannot be routed to, e.g. a classic queue whose home node is down).
 */
export type UnavailableReason = 'no_consumers' | 'queue_unavailable';

/** The method's service cannot take the call now (`reason` says why); it was not run. */
export class RpcNoConsumersError extends LocalRpcError {
  override readonly name = 'RpcNoConsumersError';
  readonly code = LocalErrorCode.NoConsumers;
  readonly retryable = true;
  /** @default 'no_consumers' */
  readonly reason: UnavailableReason;
  constructor(readonly service: string, readonly method: string, readonly queued: number, options?: LocalOptions & { readonly reason?: UnavailableReason }) {
    super(options?.reason === 'queue_unavailable' ? `Service unavailable: the queue of ${service} cannot take requests now` : `Service unavailable: no instance of ${service} is running`, options);
    this.reason = options?.reason ?? 'no_consumers';
  }
}

/** The encoded request is over `maxMessageBytes`; refused before it is sent. */
export class RpcTooLargeError extends LocalRpcError {
  override readonly name = 'RpcTooLargeError';
  readonly code = LocalErrorCode.TooLarge;
  readonly retryable = false;
  constructor(readonly limit: number, options?: LocalOptions) {
    super(`Request too large (limit ${limit} bytes)`, options);
  }
}

/** The method name cannot be a routing key (empty, over 255 bytes, control characters). */
export class RpcInvalidMethodError extends LocalRpcError {
  override readonly name = 'RpcInvalidMethodError';
  readonly code = LocalErrorCode.InvalidMethod;
  readonly retryable = false;
  constructor(options?: LocalOptions) {
    super('Invalid method name', options);
  }
}

/** A reply came back that is not a JSON-RPC response (`detail` says how: too large, too deep, not JSON...). */
export class RpcUnreadableReplyError extends LocalRpcError {
  override readonly name = 'RpcUnreadableReplyError';
  readonly code = LocalErrorCode.UnreadableReply;
  readonly retryable = false;
  constructor(readonly detail: string, options?: LocalOptions) {
    super(`Unreadable reply (${detail})`, options);
  }
}

/** Every local error; `switch (err.code)` over it narrows to the class. */
export type LocalError =
  | RpcTimeoutError
  | RpcAbortedError
  | RpcConnectionLostError
  | RpcReplyQueueLostError
  | RpcPendingLimitError
  | RpcBufferFullError
  | RpcShuttingDownError
  | RpcNotConfirmedError
  | RpcNoRouteError
  | RpcNoConsumersError
  | RpcTooLargeError
  | RpcInvalidMethodError
  | RpcUnreadableReplyError;

export function isLocalError(err: unknown): err is LocalError {
  return err instanceof LocalRpcError;
}
