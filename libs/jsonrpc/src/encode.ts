import { RawNumberId } from './raw-id';
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

type AnyMessage = RequestMessage | NotificationMessage | ResponseMessage;

/**
 * Serializes a message or a batch. Ids are passed through untouched, so a
 * string id stays a string, 1.5 stays 1.5, and a {@link RawNumberId}
 * (9007199254740993, 1.0) is written back as the text it was received as.
 */
export function encode(message: AnyMessage | readonly AnyMessage[]): string {
  if (Array.isArray(message)) return (message as readonly AnyMessage[]).some(hasRawId) ? `[${(message as readonly AnyMessage[]).map(encodeOne).join(',')}]` : JSON.stringify(message);
  return encodeOne(message as AnyMessage);
}

function hasRawId(message: AnyMessage): boolean {
  return 'id' in message && message.id instanceof RawNumberId;
}

/**
 * One message; a raw id is spliced in as the last member, since
 * JSON.stringify can only write numbers it can represent (Node 20 has no
 * JSON.rawJSON). Member order means nothing in JSON.
 */
function encodeOne(message: AnyMessage): string {
  if (!('id' in message) || !(message.id instanceof RawNumberId)) return JSON.stringify(message);
  const { id, ...rest } = message;
  const text = JSON.stringify(rest);
  return `${text.slice(0, -1)}${text.length > 2 ? ',' : ''}"id":${id.text}}`;
}

/**
 * Serializes a response, falling back to -32603 with the same id when the
 * result cannot be represented as JSON (a BigInt, a cycle): the caller gets a
 * clear error instead of the transport throwing mid-send. `onUnencodable` hears
 * of each response replaced so (the error JSON.stringify threw), once each: a
 * service logs it as a bug, as it logs a handler that throws.
 */
export function encodeResponse(response: ResponseMessage | readonly ResponseMessage[], onUnencodable?: (response: ResponseMessage, err: unknown) => void): string {
  try {
    return encode(response);
  } catch {
    const fallback = (r: ResponseMessage): ResponseMessage => {
      try {
        encode(r);
        return r;
      } catch (err) {
        onUnencodable?.(r, err);
        return failureResponse(r.id, { code: -32603, message: 'Internal error', data: { reason: 'result_not_serializable' } });
      }
    };
    return encode(Array.isArray(response) ? (response as readonly ResponseMessage[]).map(fallback) : fallback(response as ResponseMessage));
  }
}
