import { ErrorCode, errorMessages, retryableCodes, type KnownErrorCode } from './codes';
import type { ErrorObject, JsonValue } from './types';

/**
 * A JSON-RPC error: the only kind of error that is ever serialized onto the
 * wire. Throw one from a handler to answer with that code; anything else a
 * handler throws becomes -32603 Internal error.
 *
 * @example throw new JsonRpcError(ErrorCode.InvalidParams, 'b must not be zero')
 */
export class JsonRpcError extends Error {
  override readonly name: string = 'JsonRpcError';
  readonly code: number;
  readonly data: JsonValue | undefined;

  constructor(code: number, message?: string, data?: JsonValue, options?: { cause?: unknown }) {
    super(message ?? errorMessages[code as KnownErrorCode] ?? 'Server error', options);
    this.code = code;
    this.data = data;
  }

  /** True when a retry cannot make things worse (the call did not run). */
  get retryable(): boolean {
    return retryableCodes.has(this.code);
  }

  toErrorObject(): ErrorObject {
    return this.data === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, data: this.data };
  }

  /** Builds the typed error class for a code received from the wire, so `instanceof` works on remote errors too. */
  static fromErrorObject(error: ErrorObject): JsonRpcError {
    const Known = classByCode.get(error.code);
    return Known ? new Known(error.message, error.data) : new JsonRpcError(error.code, error.message, error.data);
  }
}

type ErrorOptions = { cause?: unknown };

// One class per code, written out (not made by a factory) so each `code` is a literal type:
// on the `WireError` union, `switch (err.code)` narrows to the class.
export class ParseError extends JsonRpcError {
  override readonly name: string = 'ParseError';
  declare readonly code: typeof ErrorCode.ParseError;
  constructor(message?: string, data?: JsonValue, options?: ErrorOptions) {
    super(ErrorCode.ParseError, message, data, options);
  }
}
export class InvalidRequestError extends JsonRpcError {
  override readonly name: string = 'InvalidRequestError';
  declare readonly code: typeof ErrorCode.InvalidRequest;
  constructor(message?: string, data?: JsonValue, options?: ErrorOptions) {
    super(ErrorCode.InvalidRequest, message, data, options);
  }
}
export class MethodNotFoundError extends JsonRpcError {
  override readonly name: string = 'MethodNotFoundError';
  declare readonly code: typeof ErrorCode.MethodNotFound;
  constructor(message?: string, data?: JsonValue, options?: ErrorOptions) {
    super(ErrorCode.MethodNotFound, message, data, options);
  }
}
export class InvalidParamsError extends JsonRpcError {
  override readonly name: string = 'InvalidParamsError';
  declare readonly code: typeof ErrorCode.InvalidParams;
  constructor(message?: string, data?: JsonValue, options?: ErrorOptions) {
    super(ErrorCode.InvalidParams, message, data, options);
  }
}
export class InternalError extends JsonRpcError {
  override readonly name: string = 'InternalError';
  declare readonly code: typeof ErrorCode.InternalError;
  constructor(message?: string, data?: JsonValue, options?: ErrorOptions) {
    super(ErrorCode.InternalError, message, data, options);
  }
}
export class DeadlineExceededError extends JsonRpcError {
  override readonly name: string = 'DeadlineExceededError';
  declare readonly code: typeof ErrorCode.DeadlineExceeded;
  constructor(message?: string, data?: JsonValue, options?: ErrorOptions) {
    super(ErrorCode.DeadlineExceeded, message, data, options);
  }
}
export class ServiceUnavailableError extends JsonRpcError {
  override readonly name: string = 'ServiceUnavailableError';
  declare readonly code: typeof ErrorCode.ServiceUnavailable;
  constructor(message?: string, data?: JsonValue, options?: ErrorOptions) {
    super(ErrorCode.ServiceUnavailable, message, data, options);
  }
}
export class CancelledError extends JsonRpcError {
  override readonly name: string = 'CancelledError';
  declare readonly code: typeof ErrorCode.Cancelled;
  constructor(message?: string, data?: JsonValue, options?: ErrorOptions) {
    super(ErrorCode.Cancelled, message, data, options);
  }
}
export class OverloadedError extends JsonRpcError {
  override readonly name: string = 'OverloadedError';
  declare readonly code: typeof ErrorCode.Overloaded;
  constructor(message?: string, data?: JsonValue, options?: ErrorOptions) {
    super(ErrorCode.Overloaded, message, data, options);
  }
}
export class WorkerLostError extends JsonRpcError {
  override readonly name: string = 'WorkerLostError';
  declare readonly code: typeof ErrorCode.WorkerLost;
  constructor(message?: string, data?: JsonValue, options?: ErrorOptions) {
    super(ErrorCode.WorkerLost, message, data, options);
  }
}
export class UnauthorizedError extends JsonRpcError {
  override readonly name: string = 'UnauthorizedError';
  declare readonly code: typeof ErrorCode.Unauthorized;
  constructor(message?: string, data?: JsonValue, options?: ErrorOptions) {
    super(ErrorCode.Unauthorized, message, data, options);
  }
}
export class ConnectionLostError extends JsonRpcError {
  override readonly name: string = 'ConnectionLostError';
  declare readonly code: typeof ErrorCode.ConnectionLost;
  constructor(message?: string, data?: JsonValue, options?: ErrorOptions) {
    super(ErrorCode.ConnectionLost, message, data, options);
  }
}
export class ShuttingDownError extends JsonRpcError {
  override readonly name: string = 'ShuttingDownError';
  declare readonly code: typeof ErrorCode.ShuttingDown;
  constructor(message?: string, data?: JsonValue, options?: ErrorOptions) {
    super(ErrorCode.ShuttingDown, message, data, options);
  }
}

/** Every typed wire error; `switch (err.code)` over it narrows to the class (see `isWireError`). */
export type WireError =
  | ParseError
  | InvalidRequestError
  | MethodNotFoundError
  | InvalidParamsError
  | InternalError
  | DeadlineExceededError
  | ServiceUnavailableError
  | CancelledError
  | OverloadedError
  | WorkerLostError
  | UnauthorizedError
  | ConnectionLostError
  | ShuttingDownError;

/** True for an instance of one of the typed wire error classes (not a bare JsonRpcError with another code). */
export function isWireError(err: unknown): err is WireError {
  return err instanceof JsonRpcError && classByCode.get(err.code) === err.constructor;
}

type TypedErrorClass = new (message?: string, data?: JsonValue, options?: ErrorOptions) => WireError;

const classByCode = new Map<number, TypedErrorClass>([
  [ErrorCode.ParseError, ParseError],
  [ErrorCode.InvalidRequest, InvalidRequestError],
  [ErrorCode.MethodNotFound, MethodNotFoundError],
  [ErrorCode.InvalidParams, InvalidParamsError],
  [ErrorCode.InternalError, InternalError],
  [ErrorCode.DeadlineExceeded, DeadlineExceededError],
  [ErrorCode.ServiceUnavailable, ServiceUnavailableError],
  [ErrorCode.Cancelled, CancelledError],
  [ErrorCode.Overloaded, OverloadedError],
  [ErrorCode.WorkerLost, WorkerLostError],
  [ErrorCode.Unauthorized, UnauthorizedError],
  [ErrorCode.ConnectionLost, ConnectionLostError],
  [ErrorCode.ShuttingDown, ShuttingDownError],
]);
