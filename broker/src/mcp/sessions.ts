import { randomBytes } from 'node:crypto';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { decode, type DecodeLimits, type ErrorResponse, type JsonValue } from '@warren/jsonrpc';
import type { Logger } from '@warren/logger';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { sendRefusal, type GatewayRefusalCode } from '../http/errors';
import type { Principal } from '../http/access';
import { capOutput } from './output-cap';
import { decideQuota } from './quota';
import { exactIdOutput, hasMarkedId, toSdk } from './raw-ids';
import { SseSessionTransport } from './sse-transport';

export interface McpSessionsOptions {
  /** Builds the MCP server for a new session, for the principal that opens it (its tools, its calls). */
  readonly createServer: (principal: Principal) => Server;
  readonly maxSessions: number;
  /** Sessions one bearer token may hold; one more closes its least recently used idle session, or answers 429 if none is idle. */
  readonly maxSessionsPerToken: number;
  /** Sessions one client address may hold without auth (an authenticated client is counted by its token alone). */
  readonly maxSessionsPerIp: number;
  /** A session not initialized by then is closed. */
  readonly initTimeoutMs: number;
  /** Bytes a session may have queued for a client that does not read; past it the session ends. */
  readonly maxOutputBytes: number;
  readonly sseKeepAliveMs: number;
  /** A Streamable HTTP session not used for this long is closed (its client may have vanished without a DELETE). @default 600000 */
  readonly idleMs?: number;
  readonly decodeLimits: DecodeLimits;
  readonly logger: Logger;
}

interface Session {
  readonly server: Server;
  readonly transport: SseSessionTransport | StreamableHTTPServerTransport;
  /** The token that opened it (undefined without auth): only that token may use it. */
  readonly owner: number | undefined;
  /** The client address that opened it, for the per-address quota of unauthenticated use. */
  readonly ip: string;
  lastUsed: number;
  /** HTTP requests of this session still open (a Streamable HTTP GET stream can stay open for hours; an SSE session's stream counts as one while it lives). */
  open: number;
  /** Until `initialize` completes: closes the session when it fires. */
  initTimer: NodeJS.Timeout | undefined;
  /** Streamable HTTP: bytes the SDK was given to send that its responses have not written yet. */
  backlog: number;
  /** Ended for not reading: logged once. */
  overflowed: boolean;
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
  /** Every open session, initialized or not, both transports: what the quotas count. */
  private readonly live = new Set<Session>();
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
    // No HEAD routes: fastify would run the GET handler for HEAD, opening a session nobody can see.
    app.get('/sse', { exposeHeadRoute: false }, (request, reply) => this.openSse(request, reply));
    for (const url of ['/messages', '/messages/']) app.post(url, (request, reply) => this.postSse(request, reply));
    app.route({ method: ['GET', 'POST', 'DELETE'], url: '/mcp', exposeHeadRoute: false, handler: (request, reply) => this.streamableRequest(request, reply) });
    this.sweeper = setInterval(() => this.sweep(), Math.min(60_000, Math.max(1000, Math.floor(this.idleMs / 2))));
    this.sweeper.unref();
  }

  /** Closes every session (ending SSE streams, so the HTTP server can close). Idempotent. */
  async closeAll(): Promise<void> {
    this.closing = true;
    clearInterval(this.sweeper);
    const all = [...this.live];
    await Promise.all(all.map((s) => s.server.close().catch((err: unknown) => this.log.debug({ err }, 'session close failed'))));
    this.sse.clear();
    this.streamable.clear();
    this.live.clear();
  }

  private async openSse(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> {
    const refused = this.refuseNewSession(request);
    if (refused) return sendRefusal(reply, refused.code, refused.data);
    const sessionId = newSessionId();
    const transport = new SseSessionTransport(sessionId, reply.raw, '/messages/', this.o.sseKeepAliveMs, {
      maxBytes: this.o.maxOutputBytes,
      onOverflow: (queuedBytes) => this.log.warn({ sessionId, transport: 'sse', queuedBytes, limit: this.o.maxOutputBytes, remote: request.ip }, 'mcp session ended: client is not reading its stream'),
    });
    const server = this.o.createServer(request.principal);
    const session = this.newSession(server, transport, request);
    server.onclose = () => {
      this.ended(session);
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
    // Another token's session answers as if it did not exist: ids are capabilities of their token.
    if (!session || !(session.transport instanceof SseSessionTransport) || !this.owns(session, request)) return sendRefusal(reply, 'WARREN_GW_SESSION_NOT_FOUND');
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
    let exact = false;
    if (request.method === 'POST') {
      // Ids the SDK would round (beyond 2^53, 1.0) go through it marked, and come back exact (raw-ids.ts).
      const parsed = this.messages(request.body, true);
      if (!parsed.ok) return reply.code(400).send(parsed.response);
      body = parsed.batch ? parsed.messages : parsed.messages[0];
      exact = parsed.messages.some(hasMarkedId);
    }
    let session: Session | undefined;
    if (sessionId !== undefined) {
      session = this.streamable.get(sessionId);
      if (!session || !this.owns(session, request)) return sendRefusal(reply, 'WARREN_GW_SESSION_NOT_FOUND');
    } else if (request.method === 'POST' && isInitializeRequest(body)) {
      const refused = this.refuseNewSession(request);
      if (refused) return sendRefusal(reply, refused.code, refused.data);
      session = await this.newStreamableSession(request);
    } else {
      return sendRefusal(reply, 'WARREN_GW_SESSION_REQUIRED');
    }
    const active = session;
    active.lastUsed = Date.now();
    active.open++;
    reply.raw.on('close', () => {
      active.open--;
      active.lastUsed = Date.now();
      // With no response open, nothing the SDK was given can still be waiting to be written.
      if (active.open === 0) active.backlog = 0;
    });
    capOutput(reply.raw, this.o.maxOutputBytes, (queuedBytes) => this.overflowed(active, queuedBytes, request.ip), (bytes) => {
      active.backlog = Math.max(0, active.backlog - bytes);
    });
    if (exact) exactIdOutput(reply.raw);
    reply.hijack();
    await (active.transport as StreamableHTTPServerTransport).handleRequest(request.raw, reply.raw, body);
    return undefined;
  }

  private async newStreamableSession(request: FastifyRequest): Promise<Session> {
    const server = this.o.createServer(request.principal);
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: newSessionId,
      onsessioninitialized: (id) => {
        this.streamable.set(id, session);
        this.log.debug({ sessionId: id, transport: 'streamable-http' }, 'mcp session opened');
      },
    });
    const session = this.newSession(server, transport, request);
    // The SDK writes its event streams through a web stream that waits for each write to drain, so a
    // client that does not read leaves the backlog in the SDK, not in the response: count it here.
    const send = transport.send.bind(transport);
    transport.send = (message, options) => {
      // Like capOutput: judged on what earlier messages left queued, so one large answer always goes out.
      if (session.backlog > this.o.maxOutputBytes) {
        this.overflowed(session, session.backlog, request.ip);
        return Promise.resolve();
      }
      session.backlog += Buffer.byteLength(JSON.stringify(message));
      return send(message, options);
    };
    server.onclose = () => {
      this.ended(session);
      const id = transport.sessionId;
      if (id !== undefined && this.streamable.get(id) === session) this.streamable.delete(id);
      this.log.debug({ sessionId: id, transport: 'streamable-http' }, 'mcp session closed');
    };
    server.onerror = (err) => this.log.debug({ err, sessionId: transport.sessionId }, 'mcp session error');
    await server.connect(transport);
    return session;
  }

  /** A session's bookkeeping, with its initialize deadline running. */
  private newSession(server: Server, transport: Session['transport'], request: FastifyRequest): Session {
    const session: Session = { server, transport, owner: request.principal.token, ip: request.ip, lastUsed: Date.now(), open: transport instanceof SseSessionTransport ? 1 : 0, initTimer: undefined, backlog: 0, overflowed: false };
    this.live.add(session);
    session.initTimer = setTimeout(() => {
      this.log.debug({ sessionId: transport.sessionId, remote: session.ip }, 'mcp session closed: not initialized in time');
      server.close().catch(() => undefined);
    }, this.o.initTimeoutMs);
    session.initTimer.unref();
    server.oninitialized = () => {
      clearTimeout(session.initTimer);
      session.initTimer = undefined;
    };
    return session;
  }

  private ended(session: Session): void {
    clearTimeout(session.initTimer);
    session.initTimer = undefined;
    this.live.delete(session);
  }

  private overflowed(session: Session, queuedBytes: number, remote: string): void {
    if (session.overflowed) return;
    session.overflowed = true;
    this.log.warn({ sessionId: session.transport.sessionId, transport: 'streamable-http', queuedBytes, limit: this.o.maxOutputBytes, remote }, 'mcp session ended: client is not reading its stream');
    session.server.close().catch(() => undefined);
  }

  private owns(session: Session, request: FastifyRequest): boolean {
    return session.owner === request.principal.token;
  }

  /** Refuses a new session over a limit, or makes room for it by closing the client's oldest idle one (quota.ts). */
  private refuseNewSession(request: FastifyRequest): { code: GatewayRefusalCode; data?: Record<string, JsonValue> } | undefined {
    if (this.closing) return { code: 'WARREN_GW_SHUTTING_DOWN' };
    // Sessions being opened count too: an initialize not yet answered holds its place.
    const decision = decideQuota(this.live, { token: request.principal.token, ip: request.ip }, this.o);
    switch (decision.kind) {
      case 'admit':
        return undefined;
      case 'reclaim':
        this.reclaim(decision.victim, request.ip);
        return undefined;
      case 'refuse':
        return decision.data === undefined ? { code: decision.code } : { code: decision.code, data: decision.data };
      default:
        return unreachable(decision);
    }
  }

  /** Ends an idle session at once, so the one replacing it is counted without it. */
  private reclaim(session: Session, remote: string): void {
    this.ended(session);
    const id = session.transport.sessionId;
    if (id !== undefined && this.streamable.get(id) === session) this.streamable.delete(id);
    this.log.info({ sessionId: id, remote, idleMs: Date.now() - session.lastUsed }, 'mcp session reclaimed: its token opened one more over its quota');
    session.server.close().catch(() => undefined);
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

function unreachable(value: never): never {
  throw new Error(`unexpected quota decision ${JSON.stringify(value)}`);
}

/**
 * A session id: 128 bits from the CSPRNG, written like a UUID (8-4-4-4-12 hex) for clients that expect one. Not a
 * v4 UUID, which fixes 6 of its bits and leaves 122 random: a session id is a capability, so all 128 vary.
 */
export function newSessionId(): string {
  const hex = randomBytes(16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

