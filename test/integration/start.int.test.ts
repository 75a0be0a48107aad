// `npm start` as a newcomer runs it: the broker and the example services come
// up together, answer over HTTP, and stop cleanly on SIGTERM/SIGINT.
import path from 'node:path';
import { Teardown, amqpUrl, freePort, redisUrl, spawnTs, waitFor } from '@warren/testkit';
import { TestNamespace } from '../support/amqp';
import { deleteRedisKeys, repoRoot } from './helpers';

const td = new Teardown();
const ns = new TestNamespace();
beforeAll(() => {
  td.add(() => ns.destroy());
  td.add(() => deleteRedisKeys(ns.namespace));
  for (const s of ['calculator', 'audit', 'jobs', 'warren-broker']) ns.service(s);
});
afterAll(() => td.run());

it.each(['SIGTERM', 'SIGINT'] as const)('brings everything up, answers over HTTP, and stops on %s', async (signal) => {
  const port = await freePort();
  const child = spawnTs(path.join(repoRoot, 'scripts', 'start.ts'), [], {
    AMQP_URL: amqpUrl(),
    REDIS_URL: redisUrl(),
    WARREN_NAMESPACE: ns.namespace,
    GATEWAY_PORT: String(port),
    LOG_LEVEL: 'warn',
  });
  td.add(() => child.kill('SIGKILL'));
  const rpc = async (): Promise<unknown> => {
    const res = await fetch(`http://127.0.0.1:${port}/rpc`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"jsonrpc":"2.0","method":"add","params":[4,5],"id":1}' });
    return ((await res.json()) as { result?: unknown }).result;
  };
  await waitFor(async () => (await rpc().catch(() => undefined)) === 9, { timeoutMs: 20_000, intervalMs: 200 });
  const exit = await child.kill(signal);
  expect(exit.code).toBe(0);
}, 60_000);
