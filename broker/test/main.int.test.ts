import path from 'node:path';
import { Teardown, amqpUrl, redisUrl, spawnTs, waitFor } from '@warren/testkit';
import { TestNamespace } from '../../test/support/amqp';
import { redisPingProbe } from '../src';

const td = new Teardown();
const ns = new TestNamespace();
afterAll(() => td.run());

describe('main.ts', () => {
  it('starts from the environment, answers, and exits 0 on SIGTERM', async () => {
    td.add(() => ns.destroy());
    ns.service('warren-broker');
    const child = spawnTs(path.join(__dirname, '..', 'src', 'main.ts'), [], {
      AMQP_URL: amqpUrl(),
      REDIS_URL: redisUrl(),
      WARREN_NAMESPACE: ns.namespace,
      GATEWAY_PORT: '0',
      LOG_LEVEL: 'info',
    });
    td.add(() => child.kill('SIGKILL'));
    const ready = JSON.parse(await child.waitForLine(/"msg":"broker ready"/, 20_000)) as { url: string };
    expect((await fetch(`${ready.url}/healthz`)).status).toBe(200);
    const readyz = (await (await fetch(`${ready.url}/readyz`)).json()) as { status: string; dependencies: unknown[] };
    expect(readyz).toMatchObject({ status: 'ready', dependencies: [{ name: 'redis', ok: true, state: 'ready', required: false }] });
    // With REDIS_URL the in-flight view is wired: GET /inflight reads Redis, and the view is served as JSON-RPC.
    const inflight = (await (await fetch(`${ready.url}/inflight`)).json()) as { configured: boolean };
    expect(inflight.configured).toBe(true);
    const rpc = (body: string): Promise<Response> => fetch(`${ready.url}/rpc`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    await waitFor(async () => {
      const answer = (await (await rpc('{"jsonrpc":"2.0","method":"inflight.status","params":{"callId":"no-such-call"},"id":1}')).json()) as { result?: { state?: string } };
      return answer.result?.state === 'unknown';
    });
    expect((await rpc('{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":"no-such-call"}}')).status).toBe(204);
    const exit = await child.kill('SIGTERM');
    expect(exit).toMatchObject({ code: 0 });
    expect(child.stdout.some((l) => l.includes('"msg":"broker stopped"'))).toBe(true);
  });

  it('exits 1 naming the variable when the environment is wrong', async () => {
    const child = spawnTs(path.join(__dirname, '..', 'src', 'main.ts'), [], { GATEWAY_PORT: 'eighty' });
    td.add(() => child.kill('SIGKILL'));
    const exit = await child.exited;
    expect(exit.code).toBe(1);
    expect(child.stderr.join('\n')).toMatch(/GATEWAY_PORT/);
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
