import {
  CancelledError, ConnectionLostError, DeadlineExceededError, InternalError, InvalidRequestError, JsonRpcError,
  MethodNotFoundError, OverloadedError, ServiceUnavailableError, ShuttingDownError, type WireError,
} from './errors';
import { isLocalError, type LocalError, type RpcNoRouteError } from './local-errors';
import type { JsonValue } from './types';

/**
 * The one place a local error meets the wire: the JSON-RPC error a gateway,
 * `relayPayload`, `RpcClient.request` or a service (a handler that lets a
 * nested call's local error escape) answers for it. The codes and
 * `data.reason`s are the ones docs/errors.md and docs/protocol.md promise.
 */
export function toWireError(err: LocalError): WireError {
  const cause = { cause: err };
  switch (err.code) {
    case 'RPC_TIMEOUT':
      return new DeadlineExceededError(undefined, err.noTimeLeft ? { reason: 'no_time_left' } : undefined, cause);
    case 'RPC_ABORTED':
      return new CancelledError(undefined, err.reason === undefined ? undefined : { reason: err.reason }, cause);
    case 'RPC_CONNECTION_LOST':
      return new ConnectionLostError(undefined, { reason: err.reason }, cause);
    case 'RPC_REPLY_QUEUE_LOST':
      return new ConnectionLostError(undefined, { reason: 'reply_queue_lost' }, cause);
    case 'RPC_PENDING_LIMIT':
      return new OverloadedError(undefined, { reason: 'too_many_pending_calls', limit: err.limit }, cause);
    case 'RPC_BUFFER_FULL':
      return new OverloadedError(undefined, { reason: 'offline_buffer_full', limit: err.limit }, cause);
    case 'RPC_SHUTTING_DOWN':
      return new ShuttingDownError(undefined, undefined, cause);
    case 'RPC_NOT_CONFIRMED':
      return new ServiceUnavailableError(undefined, { reason: err.reason }, cause);
    case 'RPC_NO_ROUTE':
      return new MethodNotFoundError(`Method not found: ${err.message}`, noRouteData(err), cause);
    case 'RPC_NO_CONSUMERS':
      return new ServiceUnavailableError(err.message, { reason: err.reason, service: err.service, method: err.method, queued: err.queued }, cause);
    case 'RPC_TOO_LARGE':
      return new InvalidRequestError('Request too large', { reason: 'too_large', limit: err.limit }, cause);
    case 'RPC_INVALID_METHOD':
      return new InvalidRequestError(undefined, { reason: 'invalid_method_name' }, cause);
    case 'RPC_UNREADABLE_REPLY':
      return new InternalError(undefined, { reason: 'unreadable_reply', detail: err.detail }, cause);
    default: {
      const unknownCode: never = err;
      throw new TypeError(`unmapped local error ${String(unknownCode)}`);
    }
  }
}

/** What -32601 carries for a request nobody serves: the method, where it was looked for, and near names (docs/errors.md). */
function noRouteData(err: RpcNoRouteError): JsonValue {
  return {
    reason: 'no_route',
    method: err.method,
    ...(err.namespace === undefined ? {} : { namespace: err.namespace }),
    ...(err.suggestions === undefined ? {} : { suggestions: [...err.suggestions] }),
  };
}

/**
 * The one mapping point from anything thrown to a wire error: wire errors
 * pass as they are, local errors through `toWireError`, anything else
 * becomes -32603 without its message or stack (they may hold secrets);
 * `exposeStack` is a debugging switch that puts them in `data`.
 */
export function toJsonRpcError(thrown: unknown, exposeStack = false): JsonRpcError {
  if (thrown instanceof JsonRpcError) return thrown;
  if (isLocalError(thrown)) return toWireError(thrown);
  if (!exposeStack) return new InternalError();
  const detail = thrown instanceof Error ? { name: thrown.name, message: thrown.message, stack: thrown.stack ?? '' } : { thrown: String(thrown) };
  return new InternalError(undefined, detail);
}

/**
 * The wire error of an error of either family (a remote answer as it is, a
 * local failure through `toWireError`); undefined for anything else, which is
 * a bug rather than an answer. For callers that show or count outcomes by
 * JSON-RPC code (the CLI, benchmarks, tests).
 */
export function wireErrorOf(err: unknown): JsonRpcError | undefined {
  return err instanceof JsonRpcError ? err : isLocalError(err) ? toWireError(err) : undefined;
}
