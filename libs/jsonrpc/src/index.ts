export type {
  JsonValue, JsonObject, Id, Params, RequestMessage, NotificationMessage, ErrorObject,
  SuccessResponse, ErrorResponse, ResponseMessage, DecodedItem, Decoded,
} from './types';
export { isErrorResponse } from './types';
export { assertNever } from './assert-never';
export { RawNumberId, isRawNumberId } from './raw-id';
export { idText, parseIdText } from './id-text';
export { ErrorCode, errorMessages, retryableCodes, type ErrorCodeName, type KnownErrorCode } from './codes';
export {
  JsonRpcError, ParseError, InvalidRequestError, MethodNotFoundError, InvalidParamsError, InternalError,
  DeadlineExceededError, ServiceUnavailableError, CancelledError, OverloadedError, WorkerLostError,
  UnauthorizedError, ConnectionLostError, ShuttingDownError, isWireError, type WireError,
} from './errors';
export {
  LocalErrorCode, LocalRpcError, RpcTimeoutError, RpcAbortedError, RpcConnectionLostError, RpcReplyQueueLostError,
  RpcPendingLimitError, RpcBufferFullError, RpcShuttingDownError, RpcNotConfirmedError, RpcNoRouteError,
  RpcNoConsumersError, RpcTooLargeError, RpcInvalidMethodError, RpcUnreadableReplyError, isLocalError,
  type LocalError, type LocalErrorCodeValue, type ConnectionLostReason, type UnavailableReason, type NotConfirmedReason, type NoRouteOptions,
} from './local-errors';
export { toJsonRpcError, toWireError, wireErrorOf } from './map-errors';
export { type DecodeLimits, type ResolvedDecodeLimits, defaultDecodeLimits, definedOnly, resolveDecodeLimits } from './limits';
export { answerPayload, badPayloadAnswer, type ServableItem } from './answer';
export { decode, classifyPayload, classifyItem, errorResponse } from './decode';
export { encode, encodeResponse, successResponse, failureResponse, requestMessage, notificationMessage } from './encode';
export { type JsonSchema, type ParamsCheck, SchemaCompiler } from './schema';
export {
  Dispatcher, type DispatcherOptions, type MethodDefinition, type NotificationDefinition, type Middleware,
  type InboundCall, type Handler,
} from './dispatcher';
export { PendingCalls, type PendingCallsOptions, type AddOptions, type SettleListener } from './pending';
