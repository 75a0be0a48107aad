import { RawNumberId } from '@warren/jsonrpc';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/**
 * The MCP SDK validates ids as strings or integers, so a {@link RawNumberId}
 * (9007199254740993, 1.0, as decoded from the client's text) cannot reach it
 * as is. Where Warren writes the SDK's messages itself (the SSE transport),
 * the id travels through the SDK as a string that no client can send (it
 * starts with NUL, which decoding never yields from a JSON number) and is
 * written back as the exact text; elsewhere it becomes the nearest number,
 * as JSON.parse would have made it.
 */
const marker = '\u0000warren-raw-id:';

export function toSdk(message: object, exact: boolean): JSONRPCMessage {
  const id = (message as { id?: unknown }).id;
  if (!(id instanceof RawNumberId)) return message as JSONRPCMessage;
  return { ...message, id: exact ? `${marker}${id.text}` : id.toJSON() } as JSONRPCMessage;
}

/** The message the client is sent: a marked id is its exact text again. */
export function fromSdk<T extends object>(message: T): T {
  const id = (message as { id?: unknown }).id;
  if (typeof id !== 'string' || !id.startsWith(marker)) return message;
  return { ...message, id: new RawNumberId(id.slice(marker.length)) };
}
