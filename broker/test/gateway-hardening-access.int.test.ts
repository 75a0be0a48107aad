// The gateway made safe to expose (issue 16), continued from gateway-hardening.int.test.ts:
// /readyz opening a Redis connection per request, sessions usable by another token, missing
// security headers; and /inflight per token, token scopes and the auth warning.
import { createServer, type Server as NetServer } from 'node:net';
import { ErrorCode } from '@warren/jsonrpc';
import { waitFor } from '@warren/testkit';
import { memoryLogger, rawHttp, type RawResponse } from '../../test/support/hostile';
import { redisPingProbe } from '../src';
import { countCall, hardeningSuite, head, initialize, json, request } from './hardening-fixture';
import { SseReader, type Fixture } from './support';
const suite = hardeningSuite();
const { td, gateway } = suite;
let f: Fixture;
beforeAll(() => {
  f = suite.fixture();
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
    const before = suite.reached();
    expect((await rpc('narrow', 'add', [1, 2])).result).toBe(3);
    expect((await rpc('narrow', 'count', [])).error?.code).toBe(ErrorCode.MethodNotFound);
    expect(suite.reached()).toBe(before);
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
