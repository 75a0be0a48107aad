import { RawNumberId } from '@warren/jsonrpc';
import type { ServerResponse } from 'node:http';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/**
 * The MCP SDK validates ids as strings or integers, so a {@link RawNumberId}
 * (9007199254740993, 1.0, as decoded from the client's text) cannot reach it
 * as is. Where Warren writes the SDK's messages itself (the SSE transport),
 * the id travels through the SDK as a string that no client can send (it
 * starts with NUL, which decoding never yields from a JSON number) and is
 * written back as the exact text; where the SDK writes them (Streamable
 * HTTP), {@link exactIdOutput} rewrites the marker in the bytes it writes.
 */
const marker = '\u0000warren-raw-id:';

export function toSdk(message: object, exact: boolean): JSONRPCMessage {
  const id = (message as { id?: unknown }).id;
  if (!(id instanceof RawNumberId)) return message as JSONRPCMessage;
  return { ...message, id: exact ? `${marker}${id.text}` : id.toJSON() } as JSONRPCMessage;
}

/** Whether {@link toSdk} marked this message's id (so its answer needs {@link exactIdOutput} where the SDK writes it). */
export function hasMarkedId(message: JSONRPCMessage): boolean {
  const id = (message as { id?: unknown }).id;
  return typeof id === 'string' && id.startsWith(marker);
}

/** The message the client is sent: a marked id is its exact text again. */
export function fromSdk<T extends object>(message: T): T {
  const id = (message as { id?: unknown }).id;
  if (typeof id !== 'string' || !id.startsWith(marker)) return message;
  return { ...message, id: new RawNumberId(id.slice(marker.length)) };
}

/** A marked id as the SDK serializes it: JSON.stringify writes the NUL as `\u0000`. */
const markedInJson = /"\\u0000warren-raw-id:([-+.0-9eE]+)"/g;
const markerBytes = Buffer.from('warren-raw-id:');

/** A chunk with every marked id written as its exact text; the chunk itself when it has none. */
function unmark(chunk: unknown): unknown {
  if (typeof chunk === 'string') return chunk.includes('warren-raw-id:') ? chunk.replace(markedInJson, '$1') : chunk;
  if (chunk instanceof Uint8Array && Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength).includes(markerBytes)) {
    return Buffer.from(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength).toString('utf8').replace(markedInJson, '$1'), 'utf8');
  }
  return chunk;
}

/**
 * Where the MCP SDK writes a response itself (Streamable HTTP, JSON or event
 * stream), rewrites a marked id ({@link toSdk} with `exact`) into its exact
 * text at the HTTP edge, as the bytes leave: the SDK routes answers by id, so
 * it must keep seeing the marker. The rewrite shortens the body, so the
 * response goes out chunked, without a Content-Length (removed before anyone
 * sets one; stripped from what writeHead is given). Install it before the SDK
 * writes, on responses to bodies that carried such an id only.
 */
export function exactIdOutput(res: ServerResponse): void {
  res.removeHeader('content-length');
  const setHeader = res.setHeader.bind(res);
  res.setHeader = ((name: string, value: number | string | readonly string[]): ServerResponse => (name.toLowerCase() === 'content-length' ? res : setHeader(name, value))) as ServerResponse['setHeader'];
  const writeHead = res.writeHead.bind(res) as (...args: unknown[]) => ServerResponse;
  res.writeHead = ((...args: unknown[]): ServerResponse => writeHead(...args.map(withoutLength))) as ServerResponse['writeHead'];
  const write = res.write.bind(res) as (...args: unknown[]) => boolean;
  res.write = ((chunk: unknown, ...rest: unknown[]): boolean => write(unmark(chunk), ...rest)) as ServerResponse['write'];
  const end = res.end.bind(res) as (...args: unknown[]) => ServerResponse;
  res.end = ((chunk?: unknown, ...rest: unknown[]): ServerResponse => (typeof chunk === 'function' || chunk === undefined ? end(chunk, ...rest) : end(unmark(chunk), ...rest))) as ServerResponse['end'];
}

/** writeHead's headers (an object or a flat/nested array) without Content-Length; other arguments as they are. */
function withoutLength(arg: unknown): unknown {
  const isLength = (key: unknown): boolean => typeof key === 'string' && key.toLowerCase() === 'content-length';
  if (Array.isArray(arg)) {
    if (arg.every((entry) => Array.isArray(entry))) return (arg as unknown[][]).filter((entry) => !isLength(entry[0]));
    const out: unknown[] = [];
    for (let i = 0; i + 1 < arg.length; i += 2) if (!isLength(arg[i])) out.push(arg[i], arg[i + 1]);
    return out;
  }
  if (typeof arg === 'object' && arg !== null) return Object.fromEntries(Object.entries(arg).filter(([key]) => !isLength(key)));
  return arg;
}
