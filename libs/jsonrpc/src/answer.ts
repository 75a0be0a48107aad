import { ErrorCode } from './codes';
import { errorResponse } from './decode';
import type { Decoded, DecodedItem, ResponseMessage } from './types';

/** An item a handler may take: a request or a notification. */
export type ServableItem = Extract<DecodedItem, { readonly kind: 'request' | 'notification' }>;
/** An item no handler may take: not a valid message, or a response sent where a request belongs. */
export type BadItem = Extract<DecodedItem, { readonly kind: 'invalid' | 'response' }>;

export function isServable(item: DecodedItem): item is ServableItem {
  return item.kind === 'request' || item.kind === 'notification';
}

/**
 * What the JSON-RPC rules answer an item no handler may take. The one place this rule lives: the
 * dispatcher, the relay (gateways) and the AMQP service runtime all answer bad items through it.
 */
export function badItemAnswer(item: BadItem): ResponseMessage {
  // A response is not something a server can answer: it is an invalid request, keyed by its id.
  return item.kind === 'invalid' ? item.response : errorResponse(item.message.id, ErrorCode.InvalidRequest);
}

/** The answer to a payload no handler can take as a whole (unparsable, or one bad item), else undefined. */
export function badPayloadAnswer(decoded: Decoded): ResponseMessage | undefined {
  if (decoded.kind === 'rejected') return decoded.response;
  if (decoded.kind === 'single' && !isServable(decoded.item)) return badItemAnswer(decoded.item);
  return undefined;
}

/**
 * Answers a decoded payload as a JSON-RPC server does, whatever serves its items: a rejected payload
 * and bad items answer by the rules above, a batch runs its items concurrently and answers what they
 * answered in order (`null`, send nothing, when that is nothing: a batch of notifications).
 */
export async function answerPayload(decoded: Decoded, serve: (item: ServableItem) => Promise<ResponseMessage | null>): Promise<ResponseMessage | ResponseMessage[] | null> {
  switch (decoded.kind) {
    case 'rejected':
      return decoded.response;
    case 'single':
      return answerItem(decoded.item, serve);
    case 'batch': {
      const answers = await Promise.all(decoded.items.map((item) => answerItem(item, serve)));
      const responses = answers.filter((a): a is ResponseMessage => a !== null);
      return responses.length === 0 ? null : responses;
    }
  }
}

function answerItem(item: DecodedItem, serve: (item: ServableItem) => Promise<ResponseMessage | null>): ResponseMessage | Promise<ResponseMessage | null> {
  return isServable(item) ? serve(item) : badItemAnswer(item);
}
