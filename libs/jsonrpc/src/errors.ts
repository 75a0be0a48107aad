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

type TypedErrorClass = new (message?: string, data?: JsonValue, options?: { cause?: unknown }) => JsonRpcError;

function typed(code: KnownErrorCode, name: string): TypedErrorClass {
  const cls = class extends JsonRpcError {
    override readonly name: string = name;
    constructor(message?: string, data?: JsonValue, options?: { cause?: unknown }) {
      super(code, message ?? errorMessages[code], data, options);
    }
  };
  Object.defineProperty(cls, 'name', { value: name });
  return cls;
}

export const ParseError = typed(ErrorCode.ParseError, 'ParseError');
export const InvalidRequestError = typed(ErrorCode.InvalidRequest, 'InvalidRequestError');
export const MethodNotFoundError = typed(ErrorCode.MethodNotFound, 'MethodNotFoundError');
export const InvalidParamsError = typed(ErrorCode.InvalidParams, 'InvalidParamsError');
export const InternalError = typed(ErrorCode.InternalError, 'InternalError');
export const DeadlineExceededError = typed(ErrorCode.DeadlineExceeded, 'DeadlineExceededError');
export const ServiceUnavailableError = typed(ErrorCode.ServiceUnavailable, 'ServiceUnavailableError');
export const CancelledError = typed(ErrorCode.Cancelled, 'CancelledError');
export const OverloadedError = typed(ErrorCode.Overloaded, 'OverloadedError');
export const WorkerLostError = typed(ErrorCode.WorkerLost, 'WorkerLostError');
export const UnauthorizedError = typed(ErrorCode.Unauthorized, 'UnauthorizedError');
export const ConnectionLostError = typed(ErrorCode.ConnectionLost, 'ConnectionLostError');
export const ShuttingDownError = typed(ErrorCode.ShuttingDown, 'ShuttingDownError');

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

/**
 * The one mapping point from anything thrown to a wire error. Non-protocol
 * errors become -32603 without their message or stack (they may hold
 * secrets); `exposeStack` is a debugging switch that puts them in `data`.
 */
export function toJsonRpcError(thrown: unknown, exposeStack = false): JsonRpcError {
  if (thrown instanceof JsonRpcError) return thrown;
  if (!exposeStack) return new InternalError();
  const detail = thrown instanceof Error ? { name: thrown.name, message: thrown.message, stack: thrown.stack ?? '' } : { thrown: String(thrown) };
  return new InternalError(undefined, detail);
}
