import type { ServerResponse } from 'node:http';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage, MessageExtraInfo } from '@modelcontextprotocol/sdk/types.js';
import { capOutput, drained } from './output-cap';

/** The stream's bound: bytes it may hold for a client that does not read, and who hears when it is passed. */
export interface OutputBound {
  readonly maxBytes: number;
  readonly onOverflow: (queuedBytes: number) => void;
}
import { encode } from '@warren/jsonrpc';
import { fromSdk } from './raw-ids';

/**
 * The server side of MCP's HTTP+SSE transport (protocol 2024-11-05) for one
 * session: the GET /sse response is the session's event stream, and what the
 * client posts to the endpoint it was given is handed in through `receive`.
 *
 * Written here rather than taken from the SDK's SSEServerTransport because
 * the design notes fix the endpoint as `/messages/?session_id=...` (the SDK
 * names the parameter `sessionId`), and because fastify has already read and
 * checked the body by the time a post reaches us. It implements the SDK's
 * Transport contract, so the SDK's Server runs the protocol on top of it.
 */
export class SseSessionTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage, extra?: MessageExtraInfo) => void;
  private keepAlive: NodeJS.Timeout | undefined;
  private state: 'new' | 'open' | 'closed' = 'new';

  constructor(
    readonly sessionId: string,
    private readonly res: ServerResponse,
    private readonly endpoint: string,
    private readonly keepAliveMs: number,
    private readonly output: OutputBound,
  ) {}

  /** Writes the stream's headers and its first event, `endpoint`. Called by Server.connect(). */
  async start(): Promise<void> {
    if (this.state !== 'new') throw new Error('SseSessionTransport already started');
    this.state = 'open';
    // Past the bound the response is destroyed, which closes the session below ('close').
    capOutput(this.res, this.output.maxBytes, this.output.onOverflow);
    this.res.writeHead(200, {
      'Content-Type': 'text/event-stream',
      'Cache-Control': 'no-cache, no-transform',
      Connection: 'keep-alive',
      // Tells nginx-style proxies not to buffer the stream.
      'X-Accel-Buffering': 'no',
    });
    this.res.write(`event: endpoint\ndata: ${this.endpoint}?session_id=${encodeURIComponent(this.sessionId)}\n\n`);
    this.res.on('close', () => this.ended());
    this.res.on('error', (err: Error) => this.onerror?.(err));
    // A comment line: clients ignore it, idle-closing proxies see traffic.
    this.keepAlive = setInterval(() => this.res.write(': keep-alive\n\n'), this.keepAliveMs);
    this.keepAlive.unref();
  }

  /** Hands a message the client posted to the protocol layer. */
  receive(message: JSONRPCMessage, extra?: MessageExtraInfo): void {
    this.onmessage?.(message, extra);
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (this.state !== 'open') throw new Error('SSE stream is closed');
    // Back-pressure: the next answer waits until the client has taken this one.
    if (!this.res.write(`event: message\ndata: ${encode(fromSdk(wireOrder(message)) as Parameters<typeof encode>[0])}\n\n`)) await drained(this.res);
  }

  async close(): Promise<void> {
    if (this.state === 'open') this.res.end();
    this.ended();
  }

  private ended(): void {
    if (this.state === 'closed') return;
    this.state = 'closed';
    clearInterval(this.keepAlive);
    this.onclose?.();
  }
}

/**
 * `jsonrpc`, `id`, then the rest: the order people read in logs and docs
 * (the SDK builds responses as `{result, jsonrpc, id}`). JSON does not care.
 */
function wireOrder(message: JSONRPCMessage): JSONRPCMessage {
  const { jsonrpc, ...rest } = message as { jsonrpc: '2.0'; id?: unknown } & Record<string, unknown>;
  const { id, ...others } = rest;
  return ('id' in rest ? { jsonrpc, id, ...others } : { jsonrpc, ...others }) as JSONRPCMessage;
}
