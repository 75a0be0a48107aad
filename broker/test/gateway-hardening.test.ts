// The hardening's pure parts without a network: auth configuration that
// cannot switch off by accident, the Host/Origin guard and the security
// headers on a bare fastify app on loopback, the shared readiness probe, and the
// server timeouts handed to Node.
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import fastify, { type FastifyInstance } from 'fastify';
import { registerHostGuard, defaultAllowedHosts, isLoopbackAddress } from '../src/http/host-guard';
import { registerSecurityHeaders, pageContentSecurityPolicy } from '../src/http/security-headers';
import { serverTimeouts } from '../src/http/timeouts';
import { sharedProbe } from '../src/probe-cache';
import { sharedRead } from '../src/shared-read';
import { brokerOptionsFromEnv, resolveGatewayOptions, type ProbeResult } from '../src';

describe('auth configuration (environment)', () => {
  it('refuses an empty, comma-only or malformed GATEWAY_TOKENS with a message that says what to do', () => {
    expect(() => brokerOptionsFromEnv({ GATEWAY_TOKENS: '' })).toThrow(/GATEWAY_TOKENS is set but holds no token.*GATEWAY_AUTH=none/);
    expect(() => brokerOptionsFromEnv({ GATEWAY_TOKENS: ',' })).toThrow(/GATEWAY_TOKENS is set but holds no token/);
    expect(() => brokerOptionsFromEnv({ GATEWAY_TOKENS: ' , ' })).toThrow(/GATEWAY_TOKENS is set but holds no token/);
    expect(() => brokerOptionsFromEnv({ GATEWAY_TOKENS: 'a,' })).toThrow(/GATEWAY_TOKENS has an empty entry/);
    expect(() => brokerOptionsFromEnv({ GATEWAY_TOKENS: 'a b' })).toThrow(/whitespace/);
    expect(() => brokerOptionsFromEnv({ GATEWAY_OPERATOR_TOKENS: '' })).toThrow(/GATEWAY_OPERATOR_TOKENS is set but holds no token/);
  });

  it('runs without auth only when told so, and not with tokens at the same time', () => {
    expect(() => brokerOptionsFromEnv({})).toThrow(/No auth is configured.*GATEWAY_AUTH=none/);
    expect(brokerOptionsFromEnv({ GATEWAY_AUTH: 'none' })).toMatchObject({ auth: 'none' });
    expect(brokerOptionsFromEnv({ GATEWAY_AUTH: 'none' })).not.toHaveProperty('tokens');
    expect(() => brokerOptionsFromEnv({ GATEWAY_AUTH: 'none', GATEWAY_TOKENS: 't' })).toThrow(/choose one/);
    expect(() => brokerOptionsFromEnv({ GATEWAY_AUTH: 'off' })).toThrow(/GATEWAY_AUTH/);
    expect(() => brokerOptionsFromEnv({ GATEWAY_AUTH: 'token' })).toThrow(/No auth is configured/);
  });

  it('reads client and operator tokens', () => {
    expect(brokerOptionsFromEnv({ GATEWAY_TOKENS: 'c1,c2', GATEWAY_OPERATOR_TOKENS: 'op' })).toMatchObject({
      auth: 'token',
      tokens: [{ token: 'c1' }, { token: 'c2' }, { token: 'op', operator: true }],
    });
    expect(brokerOptionsFromEnv({ GATEWAY_OPERATOR_TOKENS: 'op' }).tokens).toEqual([{ token: 'op', operator: true }]);
  });

  it('reads the other limits', () => {
    const o = brokerOptionsFromEnv({
      GATEWAY_AUTH: 'none', GATEWAY_ALLOWED_HOSTS: 'a.example, *.b.example', GATEWAY_ALLOWED_ORIGINS: 'https://c.example', GATEWAY_REQUEST_TIMEOUT_MS: '5000',
      GATEWAY_HEADERS_TIMEOUT_MS: '2000', GATEWAY_MAX_SESSIONS_PER_TOKEN: '7', GATEWAY_MAX_SESSIONS_PER_IP: '8', GATEWAY_SESSION_INIT_TIMEOUT_MS: '900', GATEWAY_MAX_SESSION_OUTPUT_BYTES: '65536',
    });
    expect(o).toMatchObject({
      allowedHosts: ['a.example', '*.b.example'], allowedOrigins: ['https://c.example'], requestTimeoutMs: 5000, headersTimeoutMs: 2000,
      maxSessionsPerToken: 7, maxSessionsPerIp: 8, sessionInitTimeoutMs: 900, maxSessionOutputBytes: 65536,
    });
  });
});

describe('auth configuration (options)', () => {
  it('refuses an explicit empty token list and contradictions; infers the mode otherwise', () => {
    expect(() => resolveGatewayOptions({ tokens: [] })).toThrow(/tokens is empty/);
    expect(() => resolveGatewayOptions({ auth: 'none', tokens: ['t'] })).toThrow(/auth is 'none'/);
    expect(() => resolveGatewayOptions({ auth: 'token' })).toThrow(/no tokens/);
    expect(() => resolveGatewayOptions({ tokens: [{ token: 'has space' }] })).toThrow(/whitespace/);
    expect(resolveGatewayOptions({}).auth).toBe('none');
    expect(resolveGatewayOptions({ tokens: ['t', { token: 'o', operator: true }] })).toMatchObject({ auth: 'token', tokens: [{ token: 't', operator: false }, { token: 'o', operator: true }] });
  });

  it('documents its limits as defaults and checks them', () => {
    expect(resolveGatewayOptions()).toMatchObject({
      requestTimeoutMs: 30_000, headersTimeoutMs: 10_000, maxSessionsPerToken: 100, maxSessionsPerIp: 100, sessionInitTimeoutMs: 10_000, maxSessionOutputBytes: 4 * 1024 * 1024,
      allowedHosts: ['localhost', '127.0.0.1', '::1'], allowedOrigins: [],
    });
    expect(resolveGatewayOptions({ host: '0.0.0.0' }).allowedHosts).toContain('*');
    expect(resolveGatewayOptions({ requestTimeoutMs: 500 }).headersTimeoutMs).toBe(500);
    expect(() => resolveGatewayOptions({ headersTimeoutMs: 20_000, requestTimeoutMs: 10_000 })).toThrow(/headersTimeoutMs/);
    expect(() => resolveGatewayOptions({ maxSessionOutputBytes: 0 })).toThrow(/maxSessionOutputBytes/);
  });
});

describe('Host/Origin guard and security headers', () => {
  interface Answer { statusCode: number; headers: Record<string, string | string[] | undefined>; json: () => unknown }

  /** A GET with exactly these headers (Host included), over loopback: fastify's inject() does not load under jest on Node 20. */
  async function get(a: FastifyInstance, url: string, headers: Record<string, string>): Promise<Answer> {
    const port = (a.server.address() as AddressInfo).port;
    return new Promise((resolve, reject) => {
      const req = httpRequest({ host: '127.0.0.1', port, path: url, headers, setHost: false }, (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (d: string) => (body += d)).on('end', () => resolve({ statusCode: res.statusCode ?? 0, headers: res.headers, json: () => JSON.parse(body) as unknown }));
      });
      req.on('error', reject);
      req.end();
    });
  }

  async function app(options: { allowedHosts?: readonly string[]; allowedOrigins?: readonly string[] } = {}): Promise<FastifyInstance> {
    const a = fastify();
    registerSecurityHeaders(a);
    registerHostGuard(a, { allowedHosts: options.allowedHosts ?? defaultAllowedHosts('127.0.0.1'), allowedOrigins: options.allowedOrigins ?? [] });
    a.get('/api', async () => ({ ok: true }));
    a.get('/page', { config: { page: true } }, async (_req, reply) => reply.type('text/html').header('cache-control', 'no-cache').send('<!doctype html>'));
    await a.listen({ host: '127.0.0.1', port: 0 });
    return a;
  }

  it('knows loopback binds', () => {
    expect(['127.0.0.1', '127.1.2.3', '::1', '[::1]', 'localhost'].map(isLoopbackAddress)).toEqual([true, true, true, true, true]);
    expect(['0.0.0.0', '::', '10.0.0.1', 'example.com'].map(isLoopbackAddress)).toEqual([false, false, false, false]);
  });

  it('accepts loopback Host names and the own origin; refuses others and malformed Hosts with 403', async () => {
    const a = await app();
    const status = async (headers: Record<string, string>): Promise<number> => (await get(a, '/api', headers)).statusCode;
    expect(await status({ host: 'localhost:18001' })).toBe(200);
    expect(await status({ host: '[::1]:18001' })).toBe(200);
    expect(await status({ host: '127.0.0.1:18001', origin: 'http://127.0.0.1:18001' })).toBe(200);
    for (const host of ['evil.example', 'localhost.evil.example', '127.0.0.1.evil.example', 'user@localhost', 'localhost/x', '']) expect({ host, s: await status({ host }) }).toEqual({ host, s: 403 });
    for (const origin of ['http://evil.example', 'null', 'http://localhost:18002', 'file://', 'x']) expect({ origin, s: await status({ host: 'localhost:18001', origin }) }).toEqual({ origin, s: 403 });
    const refused = await get(a, '/api', { host: 'evil.example' });
    expect(refused.json()).toMatchObject({ jsonrpc: '2.0', id: null, error: { data: { reason: 'host_not_allowed' } } });
    await a.close();
  });

  it('matches configured hosts exactly or by subdomain, and configured origins', async () => {
    const a = await app({ allowedHosts: ['api.example.com', '*.corp.example'], allowedOrigins: ['https://console.example.com'] });
    const status = async (headers: Record<string, string>): Promise<number> => (await get(a, '/api', headers)).statusCode;
    expect(await status({ host: 'API.example.com' })).toBe(200);
    expect(await status({ host: 'x.corp.example:8443' })).toBe(200);
    expect(await status({ host: 'corp.example' })).toBe(403);
    expect(await status({ host: 'xcorp.example' })).toBe(403);
    expect(await status({ host: 'api.example.com', origin: 'https://console.example.com' })).toBe(200);
    expect(await status({ host: 'api.example.com', origin: 'https://console.example.com.evil' })).toBe(403);
    await a.close();
  });

  it('puts nosniff, no-store and a deny-all CSP on API answers, 404s and refusals; the page flag gets the console policy', async () => {
    const a = await app();
    for (const res of [await get(a, '/api', { host: 'localhost' }), await get(a, '/nope', { host: 'localhost' }), await get(a, '/api', { host: 'evil' })]) {
      expect(res.headers).toMatchObject({ 'x-content-type-options': 'nosniff', 'cache-control': 'no-store', 'x-frame-options': 'DENY' });
      expect(res.headers['content-security-policy']).toMatch(/^default-src 'none'/);
    }
    const page = await get(a, '/page', { host: 'localhost' });
    expect(page.headers['content-security-policy']).toBe(pageContentSecurityPolicy);
    expect(pageContentSecurityPolicy).not.toMatch(/unsafe-inline|unsafe-eval/);
    expect(page.headers['cache-control']).toBe('no-cache');
    expect(page.headers['x-content-type-options']).toBe('nosniff');
    await a.close();
  });
});

describe('sharedProbe', () => {
  it('runs one check for concurrent callers and reuses it for maxAgeMs', async () => {
    let t = 0;
    let checks = 0;
    let release: (r: ProbeResult) => void = () => undefined;
    const probe = sharedProbe({ name: 'p', check: () => new Promise<ProbeResult>((resolve) => { checks++; release = resolve; }) }, 1000, () => t);
    const many = Array.from({ length: 200 }, () => probe.check());
    release({ ok: true, state: 'ready' });
    expect(await Promise.all(many)).toEqual(Array.from({ length: 200 }, () => ({ ok: true, state: 'ready' })));
    t = 999;
    await probe.check();
    expect(checks).toBe(1);
    t = 1001;
    const next = probe.check();
    release({ ok: false, state: 'timeout' });
    expect(await next).toEqual({ ok: false, state: 'timeout' });
    expect(checks).toBe(2);
  });

  it('turns a rejected check into not ok', async () => {
    const probe = sharedProbe({ name: 'p', check: () => Promise.reject(new Error('boom')) });
    expect(await probe.check()).toEqual({ ok: false, state: 'error' });
  });
});

describe('sharedRead', () => {
  it('shares one read among concurrent callers, keeps its value maxAgeMs, and never keeps a failure', async () => {
    let t = 0;
    let reads = 0;
    let settle: (ok: boolean) => void = () => undefined;
    const read = sharedRead(() => new Promise<number>((resolve, reject) => { const n = ++reads; settle = (ok) => (ok ? resolve(n) : reject(new Error(`read ${n} failed`))); }), 500, () => t);
    const many = Array.from({ length: 20 }, read);
    settle(true);
    expect(await Promise.all(many)).toEqual(Array(20).fill(1));
    t = 499;
    expect(await read()).toBe(1);
    t = 500;
    const failing = [read(), read()];
    settle(false);
    for (const f of failing) await expect(f).rejects.toThrow('read 2 failed');
    const next = read();
    settle(true);
    expect(await next).toBe(3);
    expect(reads).toBe(3);
  });
});

describe('serverTimeouts', () => {
  it('hands Node both timeouts and a checking interval that keeps the overrun small', () => {
    expect(serverTimeouts({ requestTimeoutMs: 30_000, headersTimeoutMs: 10_000 })).toEqual({ requestTimeout: 30_000, http: { headersTimeout: 10_000, requestTimeout: 30_000, connectionsCheckingInterval: 1000 } });
    expect(serverTimeouts({ requestTimeoutMs: 400, headersTimeoutMs: 400 }).http.connectionsCheckingInterval).toBe(100);
  });
});
