export type {
  JsonValue, JsonObject, Id, Params, RequestMessage, NotificationMessage, ErrorObject,
  SuccessResponse, ErrorResponse, ResponseMessage, DecodedItem, Decoded,
} from './types';
export { isErrorResponse } from './types';
export { RawNumberId, isRawNumberId, idText, parseIdText } from './raw-id';
export { ErrorCode, errorMessages, retryableCodes, type ErrorCodeName, type KnownErrorCode } from './codes';
export {
  JsonRpcError, ParseError, InvalidRequestError, MethodNotFoundError, InvalidParamsError, InternalError,
  DeadlineExceededError, ServiceUnavailableError, CancelledError, OverloadedError, WorkerLostError,
  UnauthorizedError, ConnectionLostError, ShuttingDownError, toJsonRpcError,
} from './errors';
export { type DecodeLimits, type ResolvedDecodeLimits, defaultDecodeLimits, definedOnly, resolveDecodeLimits } from './limits';
export { decode, classifyPayload, classifyItem, errorResponse } from './decode';
export { encode, encodeResponse, successResponse, failureResponse, requestMessage, notificationMessage } from './encode';
export { type JsonSchema, type ParamsCheck, SchemaCompiler } from './schema';
export {
  Dispatcher, type DispatcherOptions, type MethodDefinition, type NotificationDefinition, type Middleware,
  type InboundCall, type Handler,
} from './dispatcher';
export { PendingCalls, type PendingCallsOptions, type AddOptions, type SettleListener } from './pending';
