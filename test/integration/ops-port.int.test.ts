// The ops port of every example service's real main (WARREN_OPS_PORT), as
// docker-compose's healthchecks use it: /healthz answers as soon as the
// process runs, /readyz only while it is connected to RabbitMQ and consuming
// (not before its first connection, not while the connection is down), and
// the port is closed once a SIGTERM has shut the process down.
import path from 'node:path';
import { FaultProxy, Teardown, amqpUrl, freePort, redisUrl, spawnTs, waitFor } from '@warren/testkit';
import { TestNamespace } from '../support/amqp';
import { deleteRedisKeys, repoRoot, startServiceProcess, waitForLog, type ExampleService } from './helpers';

const td = new Teardown();
const ns = new TestNamespace();
beforeAll(() => {
  td.add(() => ns.destroy());
  td.add(() => deleteRedisKeys(`${ns.namespace}:`));
});
afterAll(() => td.run());

/** The status of GET url, or 0 when nothing answers (the port is closed). */
const status = (url: string): Promise<number> => fetch(url).then((r) => r.status, () => 0);

it.each(['calculator', 'audit', 'jobs'] as const)('%s: ready on its ops port once started, closed after SIGTERM', async (name: ExampleService) => {
  ns.service(name);
  const port = await freePort();
  const child = await startServiceProcess(td, name, { WARREN_NAMESPACE: ns.namespace, WARREN_OPS_PORT: String(port) });
  const base = `http://127.0.0.1:${port}`;
  expect(await status(`${base}/healthz`)).toBe(200);
  expect(await (await fetch(`${base}/readyz`)).json()).toEqual({ status: 'ready', name });
  const exit = await child.kill('SIGTERM');
  expect(exit.code).toBe(0);
  expect(await status(`${base}/healthz`)).toBe(0);
}, 60_000);

it('calculator: alive but not ready before its first connection and while RabbitMQ is unreachable, ready again after', async () => {
  ns.service('calculator');
  const proxy = await FaultProxy.forUrl(amqpUrl());
  td.add(() => proxy.close());
  proxy.refuse(true);
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const child = spawnTs(path.join(repoRoot, 'services', 'calculator', 'src', 'main.ts'), [], {
    AMQP_URL: proxy.url(amqpUrl()), REDIS_URL: redisUrl(), LOG_LEVEL: 'info', WARREN_NAMESPACE: ns.namespace, WARREN_OPS_PORT: String(port),
  });
  td.add(() => child.kill('SIGKILL'));
  await waitForLog(child, 'ops endpoint listening', {}, 30_000);
  expect(await status(`${base}/healthz`)).toBe(200);
  expect(await status(`${base}/readyz`)).toBe(503);

  proxy.refuse(false);
  await waitForLog(child, 'service ready', {}, 30_000);
  expect(await status(`${base}/readyz`)).toBe(200);

  // Cut, and keep it out: the process lives on (healthz) but does no work (readyz).
  proxy.refuse(true);
  proxy.cutAll();
  await waitFor(async () => (await status(`${base}/readyz`)) === 503, { timeoutMs: 15_000 });
  expect(await status(`${base}/healthz`)).toBe(200);
  proxy.refuse(false);
  await waitFor(async () => (await status(`${base}/readyz`)) === 200, { timeoutMs: 30_000 });

  expect((await child.kill('SIGTERM')).code).toBe(0);
  expect(await status(`${base}/readyz`)).toBe(0);
}, 90_000);
