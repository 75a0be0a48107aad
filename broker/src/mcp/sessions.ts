import { randomBytes } from 'node:crypto';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { decode, type DecodeLimits, type ErrorResponse } from '@warren/jsonrpc';
import type { Logger } from '@warren/logger';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { sendRefusal, type GatewayRefusalCode } from '../http/errors';
import { toSdk } from './raw-ids';
import { SseSessionTransport } from './sse-transport';

export interface McpSessionsOptions {
  /** Builds the MCP server for a new session. */
  readonly createServer: () => Server;
  readonly maxSessions: number;
  readonly sseKeepAliveMs: number;
  /** A Streamable HTTP session not used for this long is closed (its client may have vanished without a DELETE). @default 600000 */
  readonly idleMs?: number;
  readonly decodeLimits: DecodeLimits;
  readonly logger: Logger;
}

interface Session {
  readonly server: Server;
  readonly transport: SseSessionTransport | StreamableHTTPServerTransport;
  lastUsed: number;
  /** HTTP requests of this session still open (a Streamable HTTP GET stream can stay open for hours). */
  open: number;
}

/**
 * The MCP sessions of both transports and their routes:
 * `GET /sse` + `POST /messages/?session_id=` (HTTP+SSE, 2024-11-05) and
 * `POST|GET|DELETE /mcp` (Streamable HTTP). A session ends when its SSE
 * stream closes, on DELETE /mcp, after `idleMs` without use (Streamable
 * HTTP), or at shutdown; posts to an ended or unknown session answer 404.
 */
export class McpSessions {
  private readonly sse = new Map<string, Session>();
  private readonly streamable = new Map<string, Session>();
  private readonly log: Logger;
  private readonly idleMs: number;
  private sweeper: NodeJS.Timeout | undefined;
  private closing = false;

  constructor(private readonly o: McpSessionsOptions) {
    this.log = o.logger.child({ component: 'mcp' });
    this.idleMs = o.idleMs ?? 600_000;
  }

  counts(): { sse: number; streamable: number } {
    return { sse: this.sse.size, streamable: this.streamable.size };
  }

  /** Every open session's server, e.g. to tell them the tool list changed. */
  servers(): Server[] {
    return [...this.sse.values(), ...this.streamable.values()].map((s) => s.server);
  }

  register(app: FastifyInstance): void {
    app.get('/sse', (request, reply) => this.openSse(request, reply));
    for (const url of ['/messages', '/messages/']) app.post(url, (request, reply) => this.postSse(request, reply));
    app.route({ method: ['GET', 'POST', 'DELETE'], url: '/mcp', handler: (request, reply) => this.streamableRequest(request, reply) });
    this.sweeper = setInterval(() => this.sweep(), Math.min(60_000, Math.max(1000, Math.floor(this.idleMs / 2))));
    this.sweeper.unref();
  }

  /** Closes every session (ending SSE streams, so the HTTP server can close). Idempotent. */
  async closeAll(): Promise<void> {
    this.closing = true;
    clearInterval(this.sweeper);
    const all = [...this.sse.values(), ...this.streamable.values()];
    await Promise.all(all.map((s) => s.server.close().catch((err: unknown) => this.log.debug({ err }, 'session close failed'))));
    this.sse.clear();
    this.streamable.clear();
  }

  private async openSse(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> {
    const refused = this.refuseNewSession();
    if (refused) return sendRefusal(reply, refused);
    const sessionId = newSessionId();
    const transport = new SseSessionTransport(sessionId, reply.raw, '/messages/', this.o.sseKeepAliveMs);
    const server = this.o.createServer();
    const session: Session = { server, transport, lastUsed: Date.now(), open: 0 };
    server.onclose = () => {
      this.sse.delete(sessionId);
      this.log.debug({ sessionId, transport: 'sse' }, 'mcp session closed');
    };
    server.onerror = (err) => this.log.debug({ err, sessionId }, 'mcp session error');
    // From here on the response is the event stream; fastify must not answer it.
    reply.hijack();
    this.sse.set(sessionId, session);
    await server.connect(transport);
    this.log.debug({ sessionId, transport: 'sse', remote: request.ip }, 'mcp session opened');
    return undefined;
  }

  private async postSse(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    const query = request.query as Record<string, string | undefined>;
    // session_id is what the endpoint event hands out; sessionId is what the TypeScript SDK's own server uses.
    const sessionId = query['session_id'] ?? query['sessionId'];
    if (!sessionId) return sendRefusal(reply, 'WARREN_GW_SESSION_REQUIRED');
    const session = this.sse.get(sessionId);
    if (!session || !(session.transport instanceof SseSessionTransport)) return sendRefusal(reply, 'WARREN_GW_SESSION_NOT_FOUND');
    // The SSE transport writes its own events, so it can give raw ids back exactly.
    const parsed = this.messages(request.body, true);
    if (!parsed.ok) return reply.code(400).send(parsed.response);
    session.lastUsed = Date.now();
    for (const message of parsed.messages) session.transport.receive(message, { requestInfo: { headers: request.headers } });
    return reply.code(202).type('text/plain').send('Accepted');
  }

  private async streamableRequest(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> {
    const header = request.headers['mcp-session-id'];
    const sessionId = Array.isArray(header) ? header[0] : header;
    let body: JSONRPCMessage | JSONRPCMessage[] | undefined;
    if (request.method === 'POST') {
      const parsed = this.messages(request.body);
      if (!parsed.ok) return reply.code(400).send(parsed.response);
      body = parsed.batch ? parsed.messages : parsed.messages[0];
    }
    let session: Session | undefined;
    if (sessionId !== undefined) {
      session = this.streamable.get(sessionId);
      if (!session) return sendRefusal(reply, 'WARREN_GW_SESSION_NOT_FOUND');
    } else if (request.method === 'POST' && isInitializeRequest(body)) {
      const refused = this.refuseNewSession();
      if (refused) return sendRefusal(reply, refused);
      session = await this.newStreamableSession();
    } else {
      return sendRefusal(reply, 'WARREN_GW_SESSION_REQUIRED');
    }
    const active = session;
    active.lastUsed = Date.now();
    active.open++;
    reply.raw.on('close', () => {
      active.open--;
      active.lastUsed = Date.now();
    });
    reply.hijack();
    await (active.transport as StreamableHTTPServerTransport).handleRequest(request.raw, reply.raw, body);
    return undefined;
  }

  private async newStreamableSession(): Promise<Session> {
    const server = this.o.createServer();
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: newSessionId,
      onsessioninitialized: (id) => {
        this.streamable.set(id, session);
        this.log.debug({ sessionId: id, transport: 'streamable-http' }, 'mcp session opened');
      },
    });
    const session: Session = { server, transport, lastUsed: Date.now(), open: 0 };
    server.onclose = () => {
      const id = transport.sessionId;
      if (id !== undefined && this.streamable.get(id) === session) this.streamable.delete(id);
      this.log.debug({ sessionId: id, transport: 'streamable-http' }, 'mcp session closed');
    };
    server.onerror = (err) => this.log.debug({ err, sessionId: transport.sessionId }, 'mcp session error');
    await server.connect(transport);
    return session;
  }

  private refuseNewSession(): GatewayRefusalCode | undefined {
    if (this.closing) return 'WARREN_GW_SHUTTING_DOWN';
    if (this.sse.size + this.streamable.size >= this.o.maxSessions) return 'WARREN_GW_TOO_MANY_SESSIONS';
    return undefined;
  }

  /** Decodes a posted body with Warren's safe decoder; MCP takes one message or a batch. */
  private messages(body: unknown, exactIds = false): { ok: true; messages: JSONRPCMessage[]; batch: boolean } | { ok: false; response: ErrorResponse } {
    const decoded = decode(Buffer.isBuffer(body) ? body : '', this.o.decodeLimits);
    switch (decoded.kind) {
      case 'rejected':
        return { ok: false, response: decoded.response };
      case 'single':
      case 'batch': {
        const items = decoded.kind === 'single' ? [decoded.item] : decoded.items;
        const messages: JSONRPCMessage[] = [];
        for (const item of items) {
          if (item.kind === 'invalid') return { ok: false, response: item.response };
          messages.push(toSdk(item.message, exactIds));
        }
        return { ok: true, messages, batch: decoded.kind === 'batch' };
      }
    }
  }

  private sweep(): void {
    const cutoff = Date.now() - this.idleMs;
    for (const [id, session] of this.streamable) {
      if (session.open > 0 || session.lastUsed >= cutoff) continue;
      this.streamable.delete(id);
      this.log.debug({ sessionId: id }, 'mcp session idle; closing');
      session.server.close().catch(() => undefined);
    }
  }
}

/**
 * A session id: 128 bits from the CSPRNG, written like a UUID (8-4-4-4-12 hex) for clients that expect one. Not a
 * v4 UUID, which fixes 6 of its bits and leaves 122 random: a session id is a capability, so all 128 vary.
 */
export function newSessionId(): string {
  const hex = randomBytes(16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

