// The gateway made safe to expose (issue 16), against a real broker, one
// describe per problem a hostile-client probe found: DNS rebinding, unbounded
// SSE/Streamable HTTP buffering, stalled bodies, one client taking every MCP
// session, /readyz opening a Redis connection per request, sessions usable by
// another token, missing security headers; and /inflight per token.
import { createServer, connect, type Server as NetServer, type Socket } from 'node:net';
import { startService } from '@warren/amqp';
import { ErrorCode } from '@warren/jsonrpc';
import { Teardown, amqpUrl, waitFor } from '@warren/testkit';
import { TestNamespace } from '../../test/support/amqp';
import { memoryLogger, rawHttp, type RawResponse } from '../../test/support/hostile';
import { buildGateway, type Gateway, type GatewayOptions, redisPingProbe } from '../src';
import { SseReader, startFixture, type Fixture } from './support';

const td = new Teardown();
const ns = new TestNamespace();
let reached = 0;
let f: Fixture;

beforeAll(async () => {
  td.add(() => ns.destroy());
  f = await startFixture(ns, td, {}, { count: { handler: () => ++reached } });
});
afterAll(() => td.run());
// Each test's gateways close after it: every one listens to the broker's registry.
const perTest = new Teardown();
afterEach(() => perTest.run());

/** A second gateway on the broker's client, with other options. */
async function gateway(options: GatewayOptions): Promise<{ g: Gateway; port: number; url: string }> {
  const g = await buildGateway({ client: f.broker.client, connection: f.broker.connection, registry: f.broker.registry }, { port: 0, defaultMetrics: false, ...options });
  perTest.add(() => g.close());
  const url = await g.listen();
  return { g, port: Number(new URL(url).port), url };
}

/** A raw HTTP/1.1 request with exactly these headers (Host included: the point is to choose it). */
function request(method: string, target: string, headers: readonly (readonly [string, string])[], body = ''): string {
  const lines = [`${method} ${target} HTTP/1.1`, 'Connection: close', ...headers.map(([k, v]) => `${k}: ${v}`)];
  if (body.length > 0 || method === 'POST') lines.push(`Content-Length: ${Buffer.byteLength(body)}`);
  return `${lines.join('\r\n')}\r\n\r\n${body}`;
}

const countCall = '{"jsonrpc":"2.0","method":"count","id":1}';
const json: [string, string] = ['Content-Type', 'application/json'];
const initialize = (name = 'hardening'): string => JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name, version: '0' } } });

/**
 * Sends a request and resolves with its status, headers and whatever body came with them, then hangs up:
 * for answers that are event streams (a Streamable HTTP POST's), which do not end by themselves.
 */
function head(port: number, raw: string, from?: string): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, ...(from === undefined ? {} : { localAddress: from }) });
    let seen = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      seen = Buffer.concat([seen, chunk]);
      const end = seen.indexOf('\r\n\r\n');
      if (end < 0) return;
      socket.destroy();
      const [statusLine = '', ...lines] = seen.subarray(0, end).toString('latin1').split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const i = line.indexOf(':');
        if (i > 0) headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
      }
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(statusLine)?.[1] ?? 0), headers, body: seen.subarray(end + 4) });
    });
    socket.on('error', reject);
    socket.write(raw);
  });
}

function refusal(res: RawResponse): { code?: number; data?: { reason?: string; scope?: string } } {
  return (JSON.parse(res.body.toString()) as { error: { code?: number; data?: { reason?: string; scope?: string } } }).error;
}

describe('1. DNS rebinding: Host and Origin are checked on every route', () => {
  it('refuses a rebound Host (and its matching Origin) with 403 before anything runs, on the default loopback bind', async () => {
    const port = Number(new URL(f.url).port);
    const before = reached;
    const evil = `rebind.evil.example:${port}`;
    for (const [method, path, body] of [['POST', '/rpc', countCall], ['GET', '/services', ''], ['GET', '/metrics', ''], ['GET', '/sse', ''], ['POST', '/mcp', initialize()]] as const) {
      const res = await rawHttp(port, request(method, path, [['Host', evil], ['Origin', `http://${evil}`], json, ['Accept', 'application/json, text/event-stream']], body));
      expect({ path, status: res.status }).toEqual({ path, status: 403 });
      expect(refusal(res)).toMatchObject({ code: ErrorCode.Unauthorized, data: { reason: 'host_not_allowed' } });
    }
    expect(reached).toBe(before);
    expect(f.broker.gateway.sessions.counts()).toEqual({ sse: 0, streamable: 0 });
    // Loopback names are served.
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, 'localhost']) {
      expect((await rawHttp(port, request('POST', '/rpc', [['Host', host], json], countCall))).status).toBe(200);
    }
  });

  it('refuses a foreign Origin with 403 (MCP included), serves the gateway\'s own origin and requests without one', async () => {
    const port = Number(new URL(f.url).port);
    const host: [string, string] = ['Host', `127.0.0.1:${port}`];
    const before = reached;
    for (const origin of ['http://evil.example', 'null', `http://127.0.0.1:${port + 1}`, `https://localhost:${port}`, 'garbage']) {
      for (const [method, path, body] of [['POST', '/rpc', countCall], ['GET', '/sse', ''], ['POST', '/mcp', initialize()]] as const) {
        const res = await rawHttp(port, request(method, path, [host, ['Origin', origin], json, ['Accept', 'application/json, text/event-stream']], body));
        expect({ origin, path, status: res.status }).toEqual({ origin, path, status: 403 });
        expect(refusal(res).data?.reason).toBe('origin_not_allowed');
      }
    }
    expect(reached).toBe(before);
    expect(f.broker.gateway.sessions.counts()).toEqual({ sse: 0, streamable: 0 });
    expect((await rawHttp(port, request('POST', '/rpc', [host, ['Origin', `http://127.0.0.1:${port}`], json], countCall))).status).toBe(200);
    expect((await rawHttp(port, request('POST', '/rpc', [host, json], countCall))).status).toBe(200);
  });

  it('takes GATEWAY_ALLOWED_HOSTS / GATEWAY_ALLOWED_ORIGINS for deployments', async () => {
    const { port } = await gateway({ allowedHosts: ['gw.example.com', '*.internal.example'], allowedOrigins: ['https://console.example.com'] });
    const send = (h: string, origin?: string): Promise<RawResponse> => rawHttp(port, request('POST', '/rpc', [['Host', h], json, ...(origin ? [['Origin', origin] as [string, string]] : [])], countCall));
    expect((await send('gw.example.com')).status).toBe(200);
    expect((await send('a.internal.example:443')).status).toBe(200);
    expect((await send('gw.example.com', 'https://console.example.com')).status).toBe(200);
    expect((await send('127.0.0.1')).status).toBe(403);
    expect((await send('internal.example')).status).toBe(403);
    expect((await send('gw.example.com', 'https://evil.example')).status).toBe(403);
  });
});

/** Opens GET /sse on a raw socket that is never read (paused), and returns its session id. */
async function unreadSse(port: number): Promise<{ socket: Socket; sessionId: string }> {
  const socket = connect({ host: '127.0.0.1', port });
  td.add(() => void socket.destroy());
  socket.write(request('GET', '/sse', [['Host', `127.0.0.1:${port}`], ['Accept', 'text/event-stream']]));
  let seen = '';
  const sessionId = await new Promise<string>((resolve, reject) => {
    socket.on('data', (chunk: Buffer) => {
      seen += chunk.toString();
      const id = /session_id=([0-9a-f-]{36})/.exec(seen)?.[1];
      if (id) {
        socket.removeAllListeners('data');
        // From here on nothing is read: the kernel's buffers fill, then the gateway's would.
        socket.pause();
        resolve(id);
      }
    });
    socket.on('error', reject);
  });
  return { socket, sessionId };
}

describe('2. bounded output: a session whose client does not read is ended at the cap', () => {
  // 1000 tools/list requests per post: each answer lists the tools, so one post asks for ~0.5 MB of output.
  const batch = JSON.stringify(Array.from({ length: 1000 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'tools/list' })));

  it('SSE: the unread stream is cut and the session ended; posts then answer 404; memory stays bounded', async () => {
    const maxSessionOutputBytes = 256 * 1024;
    const { g, port } = await gateway({ maxSessionOutputBytes, bodyLimitBytes: 4 * 1024 * 1024 });
    const { sessionId } = await unreadSse(port);
    const post = (): Promise<RawResponse> => rawHttp(port, request('POST', `/messages/?session_id=${sessionId}`, [['Host', `127.0.0.1:${port}`], json], batch));
    const rssBefore = process.memoryUsage().rss;
    let posted = 0;
    // Before the fix every post was kept: 400 posts would hold ~200 MB. Here the kernel's socket
    // buffers (a few MB on loopback) fill, then the cap ends the session.
    for (; posted < 400; posted++) {
      const res = await post();
      if (res.status === 404) break;
      expect(res.status).toBe(202);
    }
    expect(posted).toBeLessThan(400);
    expect(g.sessions.counts().sse).toBe(0);
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(150 * 1024 * 1024);
  });

  it('Streamable HTTP: an unread response stream ends the session at the cap', async () => {
    // 25 tools with 8 KB descriptions (announcements bound a description to 10,000 characters) make
    // each tools/list answer 200 KB; a batch of 100 (the SDK's most) asks for 20 MB on one response
    // stream, more than a socket's kernel buffers hold.
    const tools = Object.fromEntries(Array.from({ length: 25 }, (_, i) => [`wordy${i}`, { tool: { description: 'w'.repeat(8_000) }, handler: () => 'ok' }]));
    const wordy = await startService({ urls: amqpUrl(), namespace: ns.namespace, name: ns.service('wordy'), methods: tools });
    td.add(() => wordy.close());
    await waitFor(() => f.broker.gateway.catalogue.current().tools.has('wordy24'), { message: 'wordy tools known' });
    const maxSessionOutputBytes = 256 * 1024;
    const { g, port, url } = await gateway({ maxSessionOutputBytes });
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const init = await fetch(`${url}/mcp`, { method: 'POST', headers, body: initialize() });
    const sessionId = init.headers.get('mcp-session-id') ?? '';
    await init.body?.cancel();
    await (await fetch(`${url}/mcp`, { method: 'POST', headers: { ...headers, 'mcp-session-id': sessionId }, body: '{"jsonrpc":"2.0","method":"notifications/initialized"}' })).text();
    expect(g.sessions.counts().streamable).toBe(1);
    const batch = JSON.stringify(Array.from({ length: 100 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'tools/list' })));
    // Its answer stream is never read: a raw socket, paused.
    const s = connect({ host: '127.0.0.1', port });
    td.add(() => void s.destroy());
    s.pause();
    s.write(request('POST', '/mcp', [['Host', `127.0.0.1:${port}`], json, ['Accept', 'application/json, text/event-stream'], ['Mcp-Session-Id', sessionId]], batch));
    await waitFor(() => g.sessions.counts().streamable === 0, { message: 'session ended at the cap', timeoutMs: 20_000 });
    s.destroy();
    const after = await fetch(`${url}/mcp`, { method: 'POST', headers: { ...headers, 'mcp-session-id': sessionId }, body: '{"jsonrpc":"2.0","id":1,"method":"ping"}' });
    expect(after.status).toBe(404);
  });
});

describe('3. request timeouts: a stalled request is answered 408 and closed', () => {
  it('half a body: 408 within the timeout (with and without a token); an open SSE stream is not cut', async () => {
    const { port, url } = await gateway({ requestTimeoutMs: 500 });
    const abort = new AbortController();
    td.add(() => abort.abort());
    const sse = new SseReader(await fetch(`${url}/sse`, { headers: { accept: 'text/event-stream' }, signal: abort.signal }));
    const endpoint = (await sse.next()).data;
    const stalled = `POST /rpc HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"jsonrpc":`;
    const res = await rawHttp(port, stalled, { timeoutMs: 15_000 });
    expect(res.status).toBe(408);
    expect(refusal(res).data?.reason).toBe('request_timeout');
    const headersOnly = await rawHttp(port, `GET /services HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n`, { timeoutMs: 15_000 });
    expect(headersOnly.status).toBe(408);
    // The stream opened before both timeouts fired is still served.
    const ping = await fetch(`${url}${endpoint}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"jsonrpc":"2.0","id":7,"method":"ping"}' });
    expect(ping.status).toBe(202);
    expect(JSON.parse((await sse.next()).data)).toMatchObject({ id: 7, result: {} });
    await sse.cancel();
    abort.abort();
    const authed = await gateway({ requestTimeoutMs: 500, tokens: ['t'] });
    expect((await rawHttp(authed.port, stalled.replace('\r\n\r\n', '\r\nAuthorization: Bearer t\r\n\r\n'), { timeoutMs: 15_000 })).status).toBe(408);
  });
});

describe('4. MCP session quotas', () => {
  const mcpInit = (url: string, token: string): Promise<Response> =>
    fetch(`${url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${token}` }, body: initialize() });

  const mcpPing = (url: string, token: string, session: string): Promise<Response> =>
    fetch(`${url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${token}`, 'mcp-session-id': session }, body: '{"jsonrpc":"2.0","id":1,"method":"ping"}' });
  const opened = async (res: Response): Promise<string> => {
    expect(res.status).toBe(200);
    await res.text();
    const id = res.headers.get('mcp-session-id');
    expect(id).toBeTruthy();
    return id ?? '';
  };

  it('tokens on one address are counted apart: B still opens sessions when A holds its quota; A\'s next open reclaims its oldest idle session', async () => {
    // The address quota (2) is below A's token quota (3): before issue 28 A alone locked B out with 429 scope ip.
    const { g, url } = await gateway({ tokens: ['a', 'b'], maxSessions: 10, maxSessionsPerToken: 3, maxSessionsPerIp: 2 });
    const a: string[] = [];
    for (let i = 0; i < 3; i++) a.push(await opened(await mcpInit(url, 'a')));
    for (let i = 0; i < 3; i++) await opened(await mcpInit(url, 'b'));
    expect(g.sessions.counts().streamable).toBe(6);
    // A used its first session last, so its second is now the least recently used.
    const used = await mcpPing(url, 'a', a[0] ?? '');
    expect(used.status).toBe(200);
    await used.text();
    const fourth = await opened(await mcpInit(url, 'a'));
    expect(g.sessions.counts().streamable).toBe(6);
    const reclaimed = await mcpPing(url, 'a', a[1] ?? '');
    expect(reclaimed.status).toBe(404);
    expect(await reclaimed.json()).toMatchObject({ error: { data: { reason: 'session_not_found' } } });
    for (const kept of [a[0], a[2], fourth]) {
      const res = await mcpPing(url, 'a', kept ?? '');
      expect(res.status).toBe(200);
      await res.text();
    }
  });

  it('a token whose sessions are all busy (SSE streams) gets 429 scope token; the other token still opens one', async () => {
    const { url } = await gateway({ tokens: ['hog', 'other'], maxSessions: 10, maxSessionsPerToken: 2, maxSessionsPerIp: 1 });
    const abort = new AbortController();
    perTest.add(() => abort.abort());
    for (let i = 0; i < 2; i++) {
      const sse = new SseReader(await fetch(`${url}/sse`, { headers: { accept: 'text/event-stream', authorization: 'Bearer hog' }, signal: abort.signal }));
      expect((await sse.next()).event).toBe('endpoint');
    }
    for (let i = 0; i < 3; i++) {
      const res = await mcpInit(url, 'hog');
      expect(res.status).toBe(429);
      expect(await res.json()).toMatchObject({ error: { code: ErrorCode.Overloaded, data: { reason: 'session_quota', scope: 'token', limit: 2 } } });
    }
    await opened(await mcpInit(url, 'other'));
  });

  it('per client address, without auth', async () => {
    const { port } = await gateway({ maxSessionsPerIp: 2 });
    const init = (from: string): Promise<RawResponse> => head(port, request('POST', '/mcp', [['Host', `127.0.0.1:${port}`], json, ['Accept', 'application/json, text/event-stream']], initialize()), from);
    expect((await init('127.0.4.1')).status).toBe(200);
    expect((await init('127.0.4.1')).status).toBe(200);
    const third = await rawHttp(port, request('POST', '/mcp', [['Host', `127.0.0.1:${port}`], json, ['Accept', 'application/json, text/event-stream']], initialize()), { localAddress: '127.0.4.1' });
    expect(third.status).toBe(429);
    expect(refusal(third).data).toMatchObject({ reason: 'session_quota', scope: 'ip' });
    expect((await init('127.0.4.2')).status).toBe(200);
  });

  it('a session that never completes initialize is closed after sessionInitTimeoutMs, freeing its place', async () => {
    const { g, port } = await gateway({ maxSessionsPerIp: 1, sessionInitTimeoutMs: 300 });
    const { socket } = await unreadSse(port);
    expect(g.sessions.counts().sse).toBe(1);
    await waitFor(() => g.sessions.counts().sse === 0, { message: 'uninitialized SSE session expired' });
    await waitFor(() => socket.destroyed || socket.readableEnded || socket.closed, { message: 'its stream ended' }).catch(() => undefined);
    const res = await head(port, request('POST', '/mcp', [['Host', `127.0.0.1:${port}`], json, ['Accept', 'application/json, text/event-stream']], initialize()));
    expect(res.status).toBe(200);
    expect(g.sessions.counts().streamable).toBe(1);
    await waitFor(() => g.sessions.counts().streamable === 0, { message: 'uninitialized Streamable HTTP session expired' });
  });

  it('HEAD /sse and HEAD /mcp open no session', async () => {
    const { g, port } = await gateway({});
    for (const path of ['/sse', '/mcp']) {
      const res = await rawHttp(port, request('HEAD', path, [['Host', `127.0.0.1:${port}`], ['Accept', 'text/event-stream']]), { timeoutMs: 5000 });
      expect(res.status).not.toBe(200);
    }
    expect(g.sessions.counts()).toEqual({ sse: 0, streamable: 0 });
  });
});

describe('5. /readyz shares one Redis connection', () => {
  it('200 concurrent probes make at most one connection to Redis', async () => {
    let connections = 0;
    const fake: NetServer = createServer((socket) => {
      connections++;
      socket.on('data', (chunk: Buffer) => {
        for (let i = chunk.toString().split('PING').length - 1; i > 0; i--) socket.write('+PONG\r\n');
      });
      socket.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => fake.listen(0, '127.0.0.1', resolve));
    const probe = redisPingProbe(`redis://127.0.0.1:${(fake.address() as { port: number }).port}`);
    td.add(() => new Promise<void>((resolve) => {
      probe.close();
      fake.close(() => resolve());
    }));
    const { url } = await gateway({ probes: [probe] });
    const answers = await Promise.all(Array.from({ length: 200 }, async () => (await fetch(`${url}/readyz`)).json() as Promise<{ dependencies: { ok: boolean }[] }>));
    expect(answers.every((a) => a.dependencies[0]?.ok === true)).toBe(true);
    expect(connections).toBe(1);
  });
});

describe('6. sessions are bound to the token that opened them', () => {
  it('another token cannot post into, read or end a session (404); its owner can', async () => {
    const { url, port } = await gateway({ tokens: ['alice', 'mallory'] });
    const init = await fetch(`${url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: 'Bearer alice' }, body: initialize() });
    const sessionId = init.headers.get('mcp-session-id') ?? '';
    await init.text();
    for (const method of ['POST', 'GET', 'DELETE']) {
      const res = await fetch(`${url}/mcp`, { method, headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: 'Bearer mallory', 'mcp-session-id': sessionId }, ...(method === 'POST' ? { body: '{"jsonrpc":"2.0","id":1,"method":"ping"}' } : {}) });
      expect({ method, status: res.status }).toEqual({ method, status: 404 });
    }
    const own = await fetch(`${url}/mcp`, { method: 'DELETE', headers: { authorization: 'Bearer alice', 'mcp-session-id': sessionId } });
    expect(own.status).toBe(200);
    // The SSE transport too.
    const abort = new AbortController();
    td.add(() => abort.abort());
    const sse = new SseReader(await fetch(`${url}/sse`, { headers: { accept: 'text/event-stream', authorization: 'Bearer alice' }, signal: abort.signal }));
    const endpoint = (await sse.next()).data;
    const post = (token: string): Promise<RawResponse> => rawHttp(port, request('POST', endpoint, [['Host', `127.0.0.1:${port}`], json, ['Authorization', `Bearer ${token}`]], '{"jsonrpc":"2.0","id":1,"method":"ping"}'));
    expect((await post('mallory')).status).toBe(404);
    expect((await post('alice')).status).toBe(202);
    await sse.cancel();
    abort.abort();
  });
});

describe('7. security headers on every response', () => {
  it('nosniff, no-store and a deny-all CSP on API answers, refusals, 404s and the MCP streams', async () => {
    const port = Number(new URL(f.url).port);
    const host: [string, string] = ['Host', `127.0.0.1:${port}`];
    const answers = [
      await rawHttp(port, request('POST', '/rpc', [host, json], countCall)),
      await rawHttp(port, request('GET', '/healthz', [host])),
      await rawHttp(port, request('GET', '/no-such-route', [host])),
      await rawHttp(port, request('POST', '/rpc', [['Host', 'evil.example'], json], countCall)),
      await rawHttp(port, request('POST', '/rpc', [host, ['Content-Type', 'text/plain']], 'x')),
      await head(port, request('POST', '/mcp', [host, json, ['Accept', 'application/json, text/event-stream']], initialize())),
    ];
    for (const res of answers) {
      expect(res.headers).toMatchObject({ 'x-content-type-options': 'nosniff', 'x-frame-options': 'DENY', 'referrer-policy': 'no-referrer' });
      expect(res.headers['content-security-policy']).toMatch(/default-src 'none'/);
    }
    for (const res of answers.slice(0, 5)) expect(res.headers['cache-control']).toBe('no-store');
    const abort = new AbortController();
    const sse = await fetch(`${f.url}/sse`, { headers: { accept: 'text/event-stream' }, signal: abort.signal });
    expect(sse.headers.get('x-content-type-options')).toBe('nosniff');
    expect(sse.headers.get('cache-control')).toMatch(/no-cache/);
    abort.abort();
  });
});

describe('/inflight per token', () => {
  it('a client token sees only its own calls; an operator token sees every call', async () => {
    const { url } = await gateway({ tokens: ['client-a', 'client-b', { token: 'ops', operator: true }] });
    const park = (token: string, id: string): AbortController => {
      const ac = new AbortController();
      void fetch(`${url}/rpc`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: JSON.stringify({ jsonrpc: '2.0', method: 'sleep', params: [20_000], id }), signal: ac.signal }).catch(() => undefined);
      td.add(() => ac.abort());
      return ac;
    };
    const a = park('client-a', 'a-call');
    const b = park('client-b', 'b-call');
    const seen = async (token: string): Promise<{ scope: string; gateway: { id: string }[] }> => (await fetch(`${url}/inflight`, { headers: { authorization: `Bearer ${token}` } })).json() as Promise<{ scope: string; gateway: { id: string }[] }>;
    await waitFor(async () => (await seen('ops')).gateway.length === 2, { message: 'both calls in flight' });
    expect((await seen('client-a'))).toMatchObject({ scope: 'own', gateway: [{ id: 'a-call' }] });
    expect((await seen('client-b')).gateway.map((c) => c.id)).toEqual(['b-call']);
    expect((await seen('ops'))).toMatchObject({ scope: 'all' });
    expect((await seen('ops')).gateway.map((c) => c.id).sort()).toEqual(['a-call', 'b-call']);
    a.abort();
    b.abort();
  });
});

describe('/inflight under many clients', () => {
  it('reads the cluster once for every request that arrives while a read runs, and again for the next one', async () => {
    let reads = 0;
    let fail = false;
    let release: () => void = () => undefined;
    const inflight = {
      list: (): Promise<{ callId: string; method: string }[]> => {
        reads++;
        return new Promise((resolve, reject) => (release = () => (fail ? reject(new Error('store away')) : resolve([{ callId: `c${reads}`, method: 'work' }]))));
      },
    };
    const { url } = await gateway({ inflight });
    const get = async (): Promise<{ status: number; body: { calls: { callId: string }[] } }> => {
      const res = await fetch(`${url}/inflight`);
      return { status: res.status, body: (await res.json()) as { calls: { callId: string }[] } };
    };
    const many = Array.from({ length: 50 }, get);
    await waitFor(() => reads === 1, { message: 'the first read started' });
    // Let every request reach the route (they join the read in flight) before it ends.
    await new Promise((resolve) => setTimeout(resolve, 200));
    release();
    const answers = await Promise.all(many);
    expect(reads).toBe(1);
    expect(answers.every((a) => a.status === 200 && a.body.calls[0]?.callId === 'c1')).toBe(true);
    // Nothing is kept after the read: the next request reads again.
    const next = get();
    await waitFor(() => reads === 2, { message: 'a second read' });
    release();
    expect((await next).body.calls[0]?.callId).toBe('c2');
    // A failed read answers 503 to its waiters and is not kept either.
    fail = true;
    const failed = [get(), get()];
    await waitFor(() => reads === 3, { message: 'a third read' });
    await new Promise((resolve) => setTimeout(resolve, 100));
    release();
    expect((await Promise.all(failed)).map((a) => a.status)).toEqual([503, 503]);
    fail = false;
    const again = get();
    await waitFor(() => reads === 4, { message: 'read again after the failure' });
    release();
    expect((await again).status).toBe(200);
  });
});

describe('token scopes and the auth warning', () => {
  it('a token narrowed to some methods calls only those, over /rpc and MCP; others keep the gateway\'s list', async () => {
    const { url } = await gateway({ tokens: [{ token: 'narrow', allowMethods: ['add', 'calc*'] }, 'wide'] });
    const rpc = async (token: string, method: string, params: unknown): Promise<{ result?: unknown; error?: { code: number } }> =>
      (await fetch(`${url}/rpc`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: JSON.stringify({ jsonrpc: '2.0', method, params, id: 1 }) })).json() as Promise<{ result?: unknown; error?: { code: number } }>;
    const before = reached;
    expect((await rpc('narrow', 'add', [1, 2])).result).toBe(3);
    expect((await rpc('narrow', 'count', [])).error?.code).toBe(ErrorCode.MethodNotFound);
    expect(reached).toBe(before);
    expect((await rpc('wide', 'count', [])).result).toBe(before + 1);
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: 'Bearer narrow' };
    const init = await fetch(`${url}/mcp`, { method: 'POST', headers, body: initialize() });
    const sessionId = init.headers.get('mcp-session-id') ?? '';
    await init.text();
    await (await fetch(`${url}/mcp`, { method: 'POST', headers: { ...headers, 'mcp-session-id': sessionId }, body: '{"jsonrpc":"2.0","method":"notifications/initialized"}' })).text();
    const list = await fetch(`${url}/mcp`, { method: 'POST', headers: { ...headers, 'mcp-session-id': sessionId }, body: '{"jsonrpc":"2.0","id":2,"method":"tools/list"}' });
    const text = await list.text();
    const tools = (JSON.parse(/data: (.*)/.exec(text)?.[1] ?? '{}') as { result?: { tools: { name: string }[] } }).result?.tools.map((t) => t.name);
    expect(tools).toEqual(['calculate']);
  });

  it('warns at start when listening beyond loopback without auth', async () => {
    const log = memoryLogger('info');
    await gateway({ host: '0.0.0.0', logger: log.logger });
    expect(log.entries().filter((e) => e['level'] === 40 && String(e['msg']).includes('without auth'))).toHaveLength(1);
    const quiet = memoryLogger('info');
    await gateway({ logger: quiet.logger });
    expect(quiet.entries().filter((e) => e['level'] === 40)).toEqual([]);
  });
});
