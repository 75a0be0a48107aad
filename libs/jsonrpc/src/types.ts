/** Any value JSON can carry. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

import type { RawNumberId } from './raw-id';

/**
 * A request id: the specification allows a string, a number or null. A
 * number id whose text a JavaScript number would not give back exactly
 * (beyond 2^53, `1.0`) is decoded as a {@link RawNumberId} and echoed as received.
 */
export type Id = string | number | RawNumberId | null;

/** Params are by-position (array) or by-name (object) only. */
export type Params = JsonValue[] | JsonObject;

export interface RequestMessage {
  readonly jsonrpc: '2.0';
  readonly method: string;
  readonly params?: Params;
  readonly id: Id;
}

export interface NotificationMessage {
  readonly jsonrpc: '2.0';
  readonly method: string;
  readonly params?: Params;
}

export interface ErrorObject {
  readonly code: number;
  readonly message: string;
  readonly data?: JsonValue;
}

export interface SuccessResponse {
  readonly jsonrpc: '2.0';
  readonly result: JsonValue;
  readonly id: Id;
}

export interface ErrorResponse {
  readonly jsonrpc: '2.0';
  readonly error: ErrorObject;
  readonly id: Id;
}

export type ResponseMessage = SuccessResponse | ErrorResponse;

/** What a single element of a message (or of a batch) turned out to be. */
export type DecodedItem =
  | { readonly kind: 'request'; readonly message: RequestMessage }
  | { readonly kind: 'notification'; readonly message: NotificationMessage }
  | { readonly kind: 'response'; readonly message: ResponseMessage }
  /** Not a valid message; `response` is the Invalid Request answer to send (unless it came as a notification-shaped item). */
  | { readonly kind: 'invalid'; readonly response: ErrorResponse };

/**
 * The outcome of decoding one text/byte payload. Decoding never throws.
 * `rejected` means the payload as a whole was unusable (parse error, `[]`,
 * limits): send `response` and stop.
 */
export type Decoded =
  | { readonly kind: 'single'; readonly item: DecodedItem }
  | { readonly kind: 'batch'; readonly items: readonly DecodedItem[] }
  | { readonly kind: 'rejected'; readonly response: ErrorResponse };

export function isErrorResponse(response: ResponseMessage): response is ErrorResponse {
  return 'error' in response;
}
