// The gateway's security features against a real broker: per-IP and
// per-token rate limits (429, -32004, Retry-After, nothing reaches RabbitMQ),
// bearer tokens, the method allow-list under fuzzing, and MCP session ids
// that cannot be guessed or enumerated.
import { setTimeout as sleep } from 'node:timers/promises';
import fc from 'fast-check';
import { ErrorCode } from '@warren/jsonrpc';
import { Teardown, waitFor } from '@warren/testkit';
import { TestNamespace } from '../../test/support/amqp';
import { assertResponse, httpRequest, rawHttp, routable, type RawResponse } from '../../test/support/hostile';
import { buildGateway, type Gateway, type GatewayOptions } from '../src';
import { SseReader, startFixture, type Fixture } from './support';

/** fast-check runs of the allow-list property; the report quotes it. */
export const runs = { allowList: 300 } as const;

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
async function gateway(options: GatewayOptions): Promise<{ g: Gateway; port: number }> {
  const g = await buildGateway({ client: f.broker.client, connection: f.broker.connection, registry: f.broker.registry }, { port: 0, defaultMetrics: false, ...options });
  perTest.add(() => g.close());
  return { g, port: Number(new URL(await g.listen()).port) };
}

const countCall = '{"jsonrpc":"2.0","method":"count","id":1}';

function call(port: number, headers: [string, string][] = [], from?: string, body = countCall): Promise<RawResponse> {
  return rawHttp(port, httpRequest('POST', '/rpc', [['Content-Type', 'application/json'], ...headers], body), from === undefined ? {} : { localAddress: from });
}

function expectRateLimited(res: RawResponse, scope: 'ip' | 'token'): number {
  expect(res.status).toBe(429);
  const body = JSON.parse(res.body.toString()) as unknown;
  assertResponse(body);
  expect(body).toMatchObject({ id: null, error: { code: ErrorCode.Overloaded, message: 'Overloaded', data: { reason: 'rate_limited', scope } } });
  const retryAfterMs = (body.error?.data as { retryAfterMs: number }).retryAfterMs;
  expect(retryAfterMs).toBeGreaterThan(0);
  expect(res.headers['retry-after']).toBe(String(Math.ceil(retryAfterMs / 1000)));
  return retryAfterMs;
}

describe('rate limits', () => {
  it('per client IP: a burst, then 429 + Retry-After with -32004, nothing relayed; other IPs and the probes unaffected', async () => {
    const { port } = await gateway({ rateLimit: { perIp: { perSec: 2, burst: 3 } } });
    const before = reached;
    for (let i = 0; i < 3; i++) expect((await call(port)).status).toBe(200);
    expect(reached).toBe(before + 3);
    const pending = f.broker.client.stats().pending;
    for (let i = 0; i < 5; i++) expectRateLimited(await call(port), 'ip');
    // Refused before routing: the method never ran and nothing waited on RabbitMQ.
    expect(reached).toBe(before + 3);
    expect(f.broker.client.stats().pending).toBe(pending);
    // Every limited route is limited, MCP included; the probes and /metrics are not.
    expectRateLimited(await rawHttp(port, httpRequest('GET', '/sse', [['Accept', 'text/event-stream']])), 'ip');
    expectRateLimited(await rawHttp(port, httpRequest('GET', '/services', [])), 'ip');
    for (const path of ['/healthz', '/readyz', '/metrics']) expect((await rawHttp(port, httpRequest('GET', path, []))).status).toBe(200);
    // Another client address (the loopback range is all ours) has a bucket of its own.
    expect((await call(port, [], '127.0.0.2')).status).toBe(200);
  });

  it('refills: after Retry-After (here 50 ms) the same client is served again', async () => {
    const { port } = await gateway({ rateLimit: { perIp: { perSec: 20, burst: 1 } } });
    expect((await call(port)).status).toBe(200);
    const wait = expectRateLimited(await call(port), 'ip');
    expect(wait).toBeLessThanOrEqual(50);
    await sleep(wait + 5);
    expect((await call(port)).status).toBe(200);
  });

  it('per token: each token its own bucket, checked after the token is accepted', async () => {
    const { port } = await gateway({ tokens: ['token-a', 'token-b'], rateLimit: { perToken: { perSec: 1, burst: 2 } } });
    const a: [string, string][] = [['Authorization', 'Bearer token-a']];
    const before = reached;
    expect((await call(port, a)).status).toBe(200);
    expect((await call(port, a)).status).toBe(200);
    expectRateLimited(await call(port, a), 'token');
    // The same token from another address shares the bucket; another token has its own.
    expectRateLimited(await call(port, a, '127.0.0.3'), 'token');
    expect((await call(port, [['Authorization', 'Bearer token-b']])).status).toBe(200);
    // A wrong token is refused as unauthorized, and does not spend anyone's tokens.
    expect((await call(port, [['Authorization', 'Bearer token-c']])).status).toBe(401);
    expect(reached).toBe(before + 3);
  });

  it('the IP limit comes before authentication, so token guessing is throttled too', async () => {
    const { port } = await gateway({ tokens: ['right'], rateLimit: { perIp: { perSec: 1, burst: 5 } } });
    for (let i = 0; i < 5; i++) expect((await call(port, [['Authorization', `Bearer guess-${i}`]], '127.0.0.4')).status).toBe(401);
    expectRateLimited(await call(port, [['Authorization', 'Bearer guess-6']], '127.0.0.4'), 'ip');
    expectRateLimited(await call(port, [['Authorization', 'Bearer right']], '127.0.0.4'), 'ip');
    expect((await call(port, [['Authorization', 'Bearer right']], '127.0.0.5')).status).toBe(200);
  });

  it('forgets the least recently seen address past maxKeys (bounded memory), which then starts with a full bucket', async () => {
    const { port } = await gateway({ rateLimit: { perIp: { perSec: 0.01, burst: 1 }, maxKeys: 8 } });
    const services = (from: string): Promise<RawResponse> => rawHttp(port, httpRequest('GET', '/services', []), { localAddress: from });
    expect((await services('127.0.1.1')).status).toBe(200);
    expectRateLimited(await services('127.0.1.1'), 'ip');
    for (let i = 2; i <= 9; i++) expect((await services(`127.0.1.${i}`)).status).toBe(200);
    // Eight newer addresses pushed 127.0.1.1 out of the table.
    expect((await services('127.0.1.1')).status).toBe(200);
    expectRateLimited(await services('127.0.1.9'), 'ip');
  });
});

describe('method allow-list', () => {
  it(`relays only listed methods (exact or prefix*), whatever name a caller sends (${runs.allowList} runs)`, async () => {
    const { port } = await gateway({ allowMethods: ['add', 'calc*', 'update'] });
    const name = fc.oneof(
      fc.constantFrom('add', 'count', 'Count', 'count ', 'add ', ' add', 'ADD', 'add\u0000', 'calc', 'calculate', 'calc*', '*', 'calc.x', 'calcx', 'rpc.discover', 'subtract', 'update', 'logMessage', 'a*', '', 'add.'),
      fc.string({ unit: 'grapheme', maxLength: 12 }),
      fc.string({ maxLength: 6 }).map((s) => `calc${s}`),
      fc.string({ maxLength: 6 }).map((s) => `add${s}`),
    );
    const before = reached;
    await fc.assert(
      fc.asyncProperty(name, async (method) => {
        const res = await call(port, [], undefined, JSON.stringify({ jsonrpc: '2.0', method, params: method.startsWith('calc') ? { expression: '1+1' } : [1, 2], id: 'x' }));
        expect(res.status).toBe(200);
        const body = JSON.parse(res.body.toString()) as unknown;
        assertResponse(body);
        const allowed = method === 'add' || method === 'update' || method.startsWith('calc');
        if (!allowed) expect(body.error?.code).toBe(ErrorCode.MethodNotFound);
        else if (method === 'add') expect(body.result).toBe(3);
        else if (method === 'calculate') expect(body.result).toBe('2');
        else expect(body.error?.code).toBe(routable(method) ? ErrorCode.MethodNotFound : ErrorCode.InvalidRequest);
      }),
      { numRuns: runs.allowList },
    );
    expect(reached).toBe(before);
  });

  it('drops notifications of unlisted methods before RabbitMQ', async () => {
    const { port } = await gateway({ allowMethods: ['update'] });
    const before = f.notified.length;
    const res = await call(port, [], undefined, '[{"jsonrpc":"2.0","method":"logMessage","params":["no"]},{"jsonrpc":"2.0","method":"update","params":[1]}]');
    expect(res.status).toBe(204);
    // Both would go to the same subscriber's queue in order: once `update` arrived, `logMessage` would have.
    await waitFor(() => f.notified.slice(before).includes('update'));
    expect(f.notified.slice(before)).toEqual(['update']);
  });
});

describe('MCP session ids', () => {
  const guesses = (real: string): string[] => {
    const hex = real.replace(/-/g, '');
    const layout = (h: string): string => `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
    const out = new Set<string>();
    // Every single-digit change of the real id, the id in other spellings, and its neighbours.
    for (let i = 0; i < hex.length; i++) for (const d of ['0', 'f', ((parseInt(hex[i] as string, 16) + 1) % 16).toString(16)]) out.add(layout(`${hex.slice(0, i)}${d}${hex.slice(i + 1)}`));
    const n = BigInt(`0x${hex}`);
    for (const delta of [1n, -1n, 2n, 256n]) out.add(layout((n + delta).toString(16).padStart(32, '0').slice(-32)));
    for (const v of [real.toUpperCase(), hex, ` ${real}`, `${real} `, real.slice(0, -1), `${real}0`, '00000000-0000-0000-0000-000000000000', 'ffffffff-ffff-ffff-ffff-ffffffffffff']) out.add(v);
    out.delete(real);
    return [...out];
  };

  it('SSE: the endpoint id is 128 random bits; every guess near it answers 404, the real one 202', async () => {
    const abort = new AbortController();
    const res = await fetch(`${f.url}/sse`, { headers: { accept: 'text/event-stream' }, signal: abort.signal });
    const reader = new SseReader(res);
    td.add(() => abort.abort());
    const first = await reader.next();
    const real = /session_id=([0-9a-f-]{36})$/.exec(first.data)?.[1] ?? '';
    expect(real).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    const port = Number(new URL(f.url).port);
    const ping = '{"jsonrpc":"2.0","id":1,"method":"ping"}';
    const tried = guesses(real);
    expect(tried.length).toBeGreaterThan(90);
    for (const guess of tried) {
      const r = await rawHttp(port, httpRequest('POST', `/messages/?session_id=${encodeURIComponent(guess)}`, [['Content-Type', 'application/json']], ping));
      expect({ guess, status: r.status }).toEqual({ guess, status: 404 });
    }
    const ok = await rawHttp(port, httpRequest('POST', `/messages/?session_id=${real}`, [['Content-Type', 'application/json']], ping));
    expect(ok.status).toBe(202);
    await reader.cancel();
    abort.abort();
  });

  it('Streamable HTTP: Mcp-Session-Id is 128 random bits; guesses near it answer 404', async () => {
    const port = Number(new URL(f.url).port);
    const init = JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'guesser', version: '0' } } });
    const res = await fetch(`${f.url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: init });
    expect(res.status).toBe(200);
    const real = res.headers.get('mcp-session-id') ?? '';
    await res.body?.cancel();
    expect(real).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    for (const guess of guesses(real).slice(0, 60)) {
      const r = await rawHttp(port, httpRequest('DELETE', '/mcp', [['Mcp-Session-Id', guess]]));
      expect({ guess, status: r.status }).toEqual({ guess, status: 404 });
    }
    expect((await rawHttp(port, httpRequest('DELETE', '/mcp', [['Mcp-Session-Id', real]]))).status).toBe(200);
  });
});
