// What the gateway's hooks do per request since the CPU-per-call work (bench:gateway), with the guarantees
// each must keep: every request on a keep-alive connection is checked for the token it carries (a reverse
// proxy may carry many clients on one connection); a Host header's reading is kept, refusals included;
// request.log is made only when a request logs, and carries its reqId then; a connection's hang-up
// signal is made once and cancels that connection's calls alone.
import { getEventListeners } from 'node:events';
import { Agent, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { ErrorCode, errorResponse, type Id, type RequestMessage, type ResponseMessage } from '@warren/jsonrpc';
import { createLogger } from '@warren/logger';
import { waitFor } from '@warren/testkit';
import { registerAccess } from '../src/http/access';
import { registerHostGuard } from '../src/http/host-guard';
import { lazyRequestLogger } from '../src/http/request-logger';
import { registerRpcRoute } from '../src/http/rpc-route';

/** Sends one GET on `agent` (keep-alive: the same socket for every request). */
function get(agent: Agent, port: number, path: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, headers, agent }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

async function listen(app: FastifyInstance): Promise<number> {
  await app.listen({ host: '127.0.0.1', port: 0 });
  return (app.server.address() as AddressInfo).port;
}

describe('the access hook on a keep-alive connection', () => {
  let app: FastifyInstance;
  let port: number;
  beforeAll(async () => {
    app = fastify();
    registerAccess(app, { tokens: [{ token: 'alpha', operator: false }, { token: 'beta', operator: true }], rateLimit: undefined, allow: () => true });
    app.get('/who', (request) => ({ token: request.principal.token ?? null, operator: request.principal.operator }));
    port = await listen(app);
  });
  afterAll(() => app.close());

  it('answers each request for the token it carries, whatever the same connection sent before', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const sockets = new Set<unknown>();
    app.server.on('connection', (s) => sockets.add(s));
    try {
      expect(await get(agent, port, '/who', { authorization: 'Bearer alpha' })).toEqual({ status: 200, body: '{"token":0,"operator":false}' });
      expect(await get(agent, port, '/who', { authorization: 'Bearer alpha' })).toEqual({ status: 200, body: '{"token":0,"operator":false}' });
      expect(await get(agent, port, '/who', { authorization: 'Bearer beta' })).toEqual({ status: 200, body: '{"token":1,"operator":true}' });
      expect((await get(agent, port, '/who', { authorization: 'Bearer alphax' })).status).toBe(401);
      expect((await get(agent, port, '/who', {})).status).toBe(401);
      expect(await get(agent, port, '/who', { authorization: 'Bearer alpha' })).toEqual({ status: 200, body: '{"token":0,"operator":false}' });
      // All of it on one connection, as a reverse proxy may send many clients' requests.
      expect(sockets.size).toBe(1);
    } finally {
      agent.destroy();
    }
  });
});

describe('the Host guard, read once per Host header', () => {
  it('keeps refusing a bad Host and accepting a good one, request after request', async () => {
    const app = fastify();
    registerHostGuard(app, { allowedHosts: ['localhost', '127.0.0.1'], allowedOrigins: [] });
    app.get('/x', () => 'ok');
    const port = await listen(app);
    const agent = new Agent({ keepAlive: true });
    const status = async (host: string): Promise<number> => (await get(agent, port, '/x', { host })).status;
    try {
      for (let i = 0; i < 3; i++) {
        expect(await status('127.0.0.1:1')).toBe(200);
        expect(await status('evil.example')).toBe(403);
        expect(await status('user@127.0.0.1')).toBe(403);
      }
      // More distinct Host headers than the cache holds: each still judged on its own.
      for (let i = 0; i < 300; i++) expect(await status(`h${i}.example`)).toBe(403);
      expect(await status('localhost')).toBe(200);
    } finally {
      agent.destroy();
      await app.close();
    }
  });
});

describe('lazyRequestLogger', () => {
  it('makes the child only when the request logs, and its lines carry the reqId', async () => {
    const lines: string[] = [];
    const destination = new Writable({ write: (chunk: Buffer, _enc, done) => { lines.push(chunk.toString('utf8')); done(); } });
    const logger = createLogger({ name: 'test', level: 'debug', destination });
    // Typed as fastify's base logger, as gateway.ts does, so the app is the plain FastifyInstance.
    const app = fastify({ loggerInstance: logger as FastifyBaseLogger, logController: new LogController({ disableRequestLogging: true }), childLoggerFactory: lazyRequestLogger });
    app.get('/quiet', () => 'ok');
    app.get('/loud', (request) => {
      request.log.debug({ detail: 1 }, 'said something');
      return request.log.level;
    });
    const port = await listen(app);
    const agent = new Agent({ keepAlive: true });
    const child = jest.spyOn(logger, 'child');
    await get(agent, port, '/quiet', {});
    expect(child).not.toHaveBeenCalled();
    expect((await get(agent, port, '/loud', {})).body).toBe('debug');
    agent.destroy();
    const said = lines.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l['msg'] === 'said something');
    expect(said).toMatchObject({ detail: 1, reqId: expect.any(String) });
    expect(child).toHaveBeenCalledTimes(1);
    await app.close();
  });
});

describe('POST /rpc: one hang-up signal per connection', () => {
  /** A gate whose calls answer at once, but for `slow`, which waits for its signal and answers -32003 then. */
  function recordingGate(): { gate: Parameters<typeof registerRpcRoute>[1]['gate']; signals: AbortSignal[]; aborted: Id[] } {
    const signals: AbortSignal[] = [];
    const aborted: Id[] = [];
    const request = (message: RequestMessage, opts: { signal?: AbortSignal } = {}): Promise<ResponseMessage> => {
      const signal = opts.signal;
      if (signal === undefined) throw new Error('no hang-up signal');
      signals.push(signal);
      if (message.method !== 'slow') return Promise.resolve({ jsonrpc: '2.0', result: 1, id: message.id });
      return new Promise((resolve) => signal.addEventListener('abort', () => {
        aborted.push(message.id);
        resolve(errorResponse(message.id, ErrorCode.Cancelled));
      }, { once: true }));
    };
    return { gate: { clientFor: () => ({ request, notify: () => Promise.resolve() }) }, signals, aborted };
  }

  function post(agent: Agent, port: number, body: string): { answer: Promise<number>; hangUp: () => void } {
    let hangUp = (): void => undefined;
    const answer = new Promise<number>((resolve, reject) => {
      const req = httpRequest({ host: '127.0.0.1', port, path: '/rpc', method: 'POST', agent, headers: { 'content-type': 'application/json', authorization: 'Bearer alpha' } }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('error', reject);
      req.end(body);
      hangUp = () => req.destroy();
    });
    return { answer, hangUp: () => hangUp() };
  }

  it('shares one signal across a keep-alive connection, cancels only that connection\'s calls when it closes, and keeps no listener of a settled call', async () => {
    const app = fastify();
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
    registerAccess(app, { tokens: [{ token: 'alpha', operator: false }], rateLimit: undefined, allow: () => true });
    const { gate, signals, aborted } = recordingGate();
    registerRpcRoute(app, { gate, allow: () => true, decodeLimits: {}, defaultTimeoutMs: 10_000, maxTimeoutMs: 60_000, maxConcurrentCalls: 100 });
    const port = await listen(app);
    const one = new Agent({ keepAlive: true, maxSockets: 1 });
    const other = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      // More requests than Node's default of 10 listeners, each with a batch of 3 calls, on one connection.
      for (let i = 0; i < 15; i++) {
        const batch = JSON.stringify([1, 2, 3].map((n) => ({ jsonrpc: '2.0', method: 'add', params: [n], id: `${i}.${n}` })));
        expect(await post(one, port, batch).answer).toBe(200);
      }
      expect(new Set(signals).size).toBe(1);
      // The route adds none per request: a long keep-alive connection gathers none.
      expect(getEventListeners(signals[0]!, 'abort')).toHaveLength(0);
      const mine = post(one, port, '{"jsonrpc":"2.0","method":"slow","id":"mine"}');
      const theirs = post(other, port, '{"jsonrpc":"2.0","method":"slow","id":"theirs"}');
      await waitFor(() => signals.length === 47);
      expect(signals[45]).toBe(signals[0]);
      expect(signals[46]).not.toBe(signals[0]);
      mine.hangUp();
      await expect(mine.answer).rejects.toThrow();
      await waitFor(() => aborted.length === 1);
      expect(aborted).toEqual(['mine']);
      expect(signals[46]?.aborted).toBe(false);
      theirs.hangUp();
      await theirs.answer.catch(() => undefined);
      await waitFor(() => aborted.length === 2);
    } finally {
      one.destroy();
      other.destroy();
      await app.close();
    }
  });
});
