import path from 'node:path';
import amqp from 'amqplib';
import { Teardown, amqpUrl, redisUrl, spawnTs, waitFor } from '@warren/testkit';
import { deleteRedisKeys } from '../../test/integration/helpers';
import { TestNamespace } from '../../test/support/amqp';
import { redisPingProbe } from '../src';

const td = new Teardown();
const ns = new TestNamespace();
afterAll(() => td.run());

/** A service queue bound for `method` that nobody consumes: requests for it wait there. Deleted with the namespace. */
async function parkQueue(service: string, method: string): Promise<void> {
  const model = await amqp.connect(amqpUrl());
  try {
    const ch = await model.createChannel();
    const queue = ns.names.serviceQueue(service);
    await ch.assertQueue(queue, { durable: true });
    await ch.bindQueue(queue, ns.names.requestExchange, method);
    await ch.close();
  } finally {
    await model.close();
  }
}

describe('main.ts', () => {
  it('starts from the environment, answers, and exits 0 on SIGTERM', async () => {
    td.add(() => ns.destroy());
    td.add(() => deleteRedisKeys(`${ns.namespace}:`));
    ns.service('warren-broker');
    const child = spawnTs(path.join(__dirname, '..', 'src', 'main.ts'), [], {
      AMQP_URL: amqpUrl(),
      REDIS_URL: redisUrl(),
      WARREN_NAMESPACE: ns.namespace,
      GATEWAY_PORT: '0',
      GATEWAY_AUTH: 'none',
      LOG_LEVEL: 'info',
    });
    td.add(() => child.kill('SIGKILL'));
    const ready = JSON.parse(await child.waitForLine(/"msg":"broker ready"/, 20_000)) as { url: string };
    expect((await fetch(`${ready.url}/healthz`)).status).toBe(200);
    const readyz = (await (await fetch(`${ready.url}/readyz`)).json()) as { status: string; dependencies: unknown[] };
    expect(readyz).toMatchObject({ status: 'ready', dependencies: [{ name: 'redis', ok: true, state: 'ready', required: false }, { name: 'discovery', ok: true, state: 'complete', required: true }] });
    // With REDIS_URL the in-flight view is wired: GET /inflight reads Redis, and the view is served as JSON-RPC.
    const inflight = (await (await fetch(`${ready.url}/inflight`)).json()) as { configured: boolean };
    expect(inflight.configured).toBe(true);
    const rpc = (body: string): Promise<Response> => fetch(`${ready.url}/rpc`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    await waitFor(async () => {
      const answer = (await (await rpc('{"jsonrpc":"2.0","method":"inflight.status","params":{"callId":"no-such-call"},"id":1}')).json()) as { result?: { state?: string } };
      return answer.result?.state === 'unknown';
    });
    expect((await rpc('{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":"no-such-call"}}')).status).toBe(204);
    // A relayed call no worker has taken yet (its queue has no consumer) reads as queued, not unknown.
    await parkQueue(ns.service('parked'), 'parked');
    const hangUp = new AbortController();
    void fetch(`${ready.url}/rpc`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"jsonrpc":"2.0","method":"parked","id":"p1"}', signal: hangUp.signal }).catch(() => undefined);
    let callId: string | undefined;
    await waitFor(async () => {
      const seen = (await (await fetch(`${ready.url}/inflight`)).json()) as { gateway: { callId: string; method: string }[] };
      callId = seen.gateway.find((c) => c.method === 'parked')?.callId;
      return callId !== undefined;
    }, { message: 'parked call relayed' });
    await waitFor(async () => {
      const answer = (await (await rpc(JSON.stringify({ jsonrpc: '2.0', method: 'inflight.status', params: { callId }, id: 2 }))).json()) as { result?: { state?: string; method?: string; attempt?: number } };
      return answer.result?.state === 'queued' && answer.result.method === 'parked' && answer.result.attempt === 0;
    }, { message: 'relayed call marked queued' });
    hangUp.abort();
    const exit = await child.kill('SIGTERM');
    expect(exit).toMatchObject({ code: 0 });
    expect(child.stdout.some((l) => l.includes('"msg":"broker stopped"'))).toBe(true);
  });

  it('exits 1 naming the variable when the environment is wrong', async () => {
    const child = spawnTs(path.join(__dirname, '..', 'src', 'main.ts'), [], { GATEWAY_PORT: 'eighty', GATEWAY_AUTH: 'none' });
    td.add(() => child.kill('SIGKILL'));
    const exit = await child.exited;
    expect(exit.code).toBe(1);
    expect(child.stderr.join('\n')).toMatch(/GATEWAY_PORT/);
  });

  it.each([
    ['GATEWAY_TOKENS is empty', { GATEWAY_TOKENS: '' }, /GATEWAY_TOKENS is set but holds no token/],
    ['GATEWAY_TOKENS is only commas', { GATEWAY_TOKENS: ' , ' }, /GATEWAY_TOKENS is set but holds no token/],
    ['GATEWAY_TOKENS has an empty entry', { GATEWAY_TOKENS: 'a,,b' }, /GATEWAY_TOKENS has an empty entry/],
    ['no auth is configured at all', {}, /No auth is configured.*GATEWAY_AUTH=none/],
  ])('refuses to start, saying why, when %s', async (_case, env: Record<string, string>, message) => {
    // An inherited GATEWAY_AUTH/GATEWAY_TOKENS must not decide the case.
    const child = spawnTs(path.join(__dirname, '..', 'src', 'main.ts'), [], { GATEWAY_AUTH: '', ...env });
    td.add(() => child.kill('SIGKILL'));
    const exit = await child.exited;
    expect(exit.code).toBe(1);
    expect(child.stderr.join('\n')).toMatch(message);
  });
});

describe('redisPingProbe', () => {
  it('reports a live Redis as ready', async () => {
    expect(await redisPingProbe(redisUrl()).check()).toEqual({ ok: true, state: 'ready' });
  });

  it('reports an unreachable one as not ok, without throwing', async () => {
    expect(await redisPingProbe('redis://127.0.0.1:1').check()).toEqual({ ok: false, state: 'unreachable' });
  });
});
