/**
 * Every error code Warren puts on the wire. The five standard ones come from
 * the JSON-RPC 2.0 specification; the rest are Warren's own, inside the
 * -32000..-32099 range the specification reserves for implementations.
 * docs/errors.md is generated from the same table in prose; keep them in step.
 */
export const ErrorCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  /** The call's deadline passed before a response arrived (or before a worker took it). */
  DeadlineExceeded: -32001,
  /** The request could not be delivered: broker unreachable, or the service has no queue. */
  ServiceUnavailable: -32002,
  /** The call was cancelled by its caller or an operator. */
  Cancelled: -32003,
  /** A bounded resource is full (pending calls, gateway concurrency, offline buffer, rate limit). */
  Overloaded: -32004,
  /** Every attempt's worker died before answering; the request was dead-lettered. */
  WorkerLost: -32005,
  /** Missing or invalid credentials, or the method is not allowed for them. */
  Unauthorized: -32006,
  /** The connection the reply would have come back on was lost; the call may or may not have run. */
  ConnectionLost: -32007,
  /** The client or service is shutting down and takes no new calls. */
  ShuttingDown: -32008,
} as const;

export type ErrorCodeName = keyof typeof ErrorCode;
export type KnownErrorCode = (typeof ErrorCode)[ErrorCodeName];

/** The message text that goes with each code; the standard ones are the specification's own words. */
export const errorMessages: Readonly<Record<KnownErrorCode, string>> = {
  [ErrorCode.ParseError]: 'Parse error',
  [ErrorCode.InvalidRequest]: 'Invalid Request',
  [ErrorCode.MethodNotFound]: 'Method not found',
  [ErrorCode.InvalidParams]: 'Invalid params',
  [ErrorCode.InternalError]: 'Internal error',
  [ErrorCode.DeadlineExceeded]: 'Deadline exceeded',
  [ErrorCode.ServiceUnavailable]: 'Service unavailable',
  [ErrorCode.Cancelled]: 'Cancelled',
  [ErrorCode.Overloaded]: 'Overloaded',
  [ErrorCode.WorkerLost]: 'Worker lost',
  [ErrorCode.Unauthorized]: 'Unauthorized',
  [ErrorCode.ConnectionLost]: 'Connection lost',
  [ErrorCode.ShuttingDown]: 'Shutting down',
};

/** Codes a caller may safely retry (the call did not run, or running it twice is the caller's choice). */
export const retryableCodes: ReadonlySet<number> = new Set<number>([
  ErrorCode.ServiceUnavailable,
  ErrorCode.Overloaded,
  ErrorCode.ShuttingDown,
]);
