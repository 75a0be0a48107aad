import { DeadlineExceededError, type Decoded, type DecodedItem, type ResponseMessage } from '@warren/jsonrpc';

/**
 * The answer to a body whose deadline had passed when it was taken (docs/protocol.md, "Services",
 * step 1): not run, acked, and answered -32001 `deadline_passed` whatever the body is, so a caller
 * whose deadline was wrong (in seconds, say) is never left waiting in silence:
 * - a request: -32001 with its id; a notification: nothing (never answered);
 * - a batch: a batch response, -32001 for each request and its -32600 for each invalid entry; nothing
 *   when every entry is a notification;
 * - a body that cannot be read (not JSON, too large, an empty batch...): -32001 with id null.
 */
export function expiredResponse(decoded: Decoded): ResponseMessage | ResponseMessage[] | undefined {
  switch (decoded.kind) {
    case 'single':
      return expiredItem(decoded.item);
    case 'batch': {
      const entries = decoded.items.flatMap((item) => {
        const answer = expiredItem(item);
        return answer ? [answer] : [];
      });
      return entries.length > 0 ? entries : undefined;
    }
    case 'rejected':
      return passed(null);
    default: {
      const unknown: never = decoded;
      return unknown;
    }
  }
}

function expiredItem(item: DecodedItem): ResponseMessage | undefined {
  switch (item.kind) {
    case 'request':
      return passed(item.message.id);
    case 'notification':
      return undefined;
    case 'invalid':
      return item.response;
    case 'response':
      return passed(item.message.id);
    default: {
      const unknown: never = item;
      return unknown;
    }
  }
}

function passed(id: ResponseMessage['id']): ResponseMessage {
  return { jsonrpc: '2.0', error: new DeadlineExceededError(undefined, { reason: 'deadline_passed' }).toErrorObject(), id };
}
