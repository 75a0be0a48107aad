import type { ErrorObject, Id, JsonValue, NotificationMessage, Params, RequestMessage, ResponseMessage, SuccessResponse, ErrorResponse } from './types';

/** A success response. `undefined` becomes `null`: a response must always carry `result`. */
export function successResponse(id: Id, result: unknown): SuccessResponse {
  return { jsonrpc: '2.0', result: (result === undefined ? null : result) as JsonValue, id };
}

export function failureResponse(id: Id, error: ErrorObject): ErrorResponse {
  return { jsonrpc: '2.0', error, id };
}

export function requestMessage(method: string, params: Params | undefined, id: Id): RequestMessage {
  return params === undefined ? { jsonrpc: '2.0', method, id } : { jsonrpc: '2.0', method, params, id };
}

export function notificationMessage(method: string, params: Params | undefined): NotificationMessage {
  return params === undefined ? { jsonrpc: '2.0', method } : { jsonrpc: '2.0', method, params };
}

/**
 * Serializes a message or a batch. Ids are passed through untouched, so a
 * string id stays a string and 1.5 stays 1.5.
 */
export function encode(message: RequestMessage | NotificationMessage | ResponseMessage | readonly (RequestMessage | NotificationMessage | ResponseMessage)[]): string {
  return JSON.stringify(message);
}

/**
 * Serializes a response, falling back to -32603 with the same id when the
 * result cannot be represented as JSON (a BigInt, a cycle): the caller gets a
 * clear error instead of the transport throwing mid-send.
 */
export function encodeResponse(response: ResponseMessage | readonly ResponseMessage[]): string {
  try {
    return JSON.stringify(response);
  } catch {
    const fallback = (r: ResponseMessage): ResponseMessage => {
      try {
        JSON.stringify(r);
        return r;
      } catch {
        return failureResponse(r.id, { code: -32603, message: 'Internal error', data: { reason: 'result_not_serializable' } });
      }
    };
    return JSON.stringify(Array.isArray(response) ? (response as readonly ResponseMessage[]).map(fallback) : fallback(response as ResponseMessage));
  }
}
