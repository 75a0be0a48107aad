// The gateway made safe to expose (issue 16), against a real broker, one
// describe per problem a hostile-client probe found: DNS rebinding, unbounded
// SSE/Streamable HTTP buffering, stalled bodies, one client taking every MCP
// session. The rest (/readyz and Redis, sessions bound to tokens, security
// headers, /inflight per token, token scopes) is in gateway-hardening-access.int.test.ts.
import { connect, type Socket } from 'node:net';
import { startService } from '@warren/amqp';
import { ErrorCode } from '@warren/jsonrpc';
import { amqpUrl, waitFor } from '@warren/testkit';
import { rawHttp, type RawResponse } from '../../test/support/hostile';
import { countCall, hardeningSuite, head, initialize, json, refusal, request } from './hardening-fixture';
import { SseReader, type Fixture } from './support';
const suite = hardeningSuite();
const { td, ns, perTest, gateway } = suite;
let f: Fixture;
beforeAll(() => {
  f = suite.fixture();
});

describe('1. DNS rebinding: Host and Origin are checked on every route', () => {
  it('refuses a rebound Host (and its matching Origin) with 403 before anything runs, on the default loopback bind', async () => {
    const port = Number(new URL(f.url).port);
    const before = suite.reached();
    const evil = `rebind.evil.example:${port}`;
    for (const [method, path, body] of [['POST', '/rpc', countCall], ['GET', '/services', ''], ['GET', '/metrics', ''], ['GET', '/sse', ''], ['POST', '/mcp', initialize()]] as const) {
      const res = await rawHttp(port, request(method, path, [['Host', evil], ['Origin', `http://${evil}`], json, ['Accept', 'application/json, text/event-stream']], body));
      expect({ path, status: res.status }).toEqual({ path, status: 403 });
      expect(refusal(res)).toMatchObject({ code: ErrorCode.Unauthorized, data: { reason: 'host_not_allowed' } });
    }
    expect(suite.reached()).toBe(before);
    expect(f.broker.gateway.sessions.counts()).toEqual({ sse: 0, streamable: 0 });
    // Loopback names are served.
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, 'localhost']) {
      expect((await rawHttp(port, request('POST', '/rpc', [['Host', host], json], countCall))).status).toBe(200);
    }
  });

  it('refuses a foreign Origin with 403 (MCP included), serves the gateway\'s own origin and requests without one', async () => {
    const port = Number(new URL(f.url).port);
    const host: [string, string] = ['Host', `127.0.0.1:${port}`];
    const before = suite.reached();
    for (const origin of ['http://evil.example', 'null', `http://127.0.0.1:${port + 1}`, `https://localhost:${port}`, 'garbage']) {
      for (const [method, path, body] of [['POST', '/rpc', countCall], ['GET', '/sse', ''], ['POST', '/mcp', initialize()]] as const) {
        const res = await rawHttp(port, request(method, path, [host, ['Origin', origin], json, ['Accept', 'application/json, text/event-stream']], body));
        expect({ origin, path, status: res.status }).toEqual({ origin, path, status: 403 });
        expect(refusal(res).data?.reason).toBe('origin_not_allowed');
      }
    }
    expect(suite.reached()).toBe(before);
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
