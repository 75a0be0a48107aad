// Issue 26's acceptance on RabbitMQ 4: `npm start` against the 4.x node with RabbitMQ 4.3's denials
// (AMQP_URL set by global-setup.ts) becomes ready, the spec examples pass through its gateway, and
// `warren call add 4 5` prints 9, both over AMQP and through the gateway. Before Warren's queues were
// all durable or exclusive, RabbitMQ closed every connection with 541 at the first reply-queue declare
// and none of this happened.
import path from 'node:path';
import { Teardown, amqpUrl, freePort, redisUrl, spawnTs, waitFor, type TsChild } from '@warren/testkit';
import { TestNamespace } from '../support/amqp';
import { expectExampleOverHttp, loadExamples } from '../support/examples';
import { deleteRedisKeys, repoRoot, runCli } from '../integration/helpers';

const td = new Teardown();
const ns = new TestNamespace();
let child: TsChild;
let url: string;

beforeAll(async () => {
  td.add(() => ns.destroy());
  td.add(() => deleteRedisKeys(ns.namespace));
  for (const s of ['calculator', 'audit', 'jobs', 'warren-broker']) ns.service(s);
  const port = await freePort();
  url = `http://127.0.0.1:${port}`;
  child = spawnTs(path.join(repoRoot, 'scripts', 'start.ts'), [], {
    AMQP_URL: amqpUrl(),
    REDIS_URL: redisUrl(),
    WARREN_NAMESPACE: ns.namespace,
    GATEWAY_PORT: String(port), WARREN_OPS_PORT: 'off',
    LOG_LEVEL: 'warn',
  });
  td.add(() => child.kill('SIGTERM').then(() => undefined));
}, 30_000);
afterAll(() => td.run());

it('npm start becomes ready on RabbitMQ 4 (GET /readyz)', async () => {
  const ready = async (): Promise<string | undefined> => ((await (await fetch(`${url}/readyz`)).json()) as { status?: string }).status;
  await waitFor(async () => (await ready().catch(() => undefined)) === 'ready', { timeoutMs: 60_000, intervalMs: 250, message: 'the gateway ready' });
  // Ready means the broker's own connection; the services answer once they have declared their queues.
  await waitFor(async () => {
    const res = await fetch(`${url}/rpc`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"jsonrpc":"2.0","method":"add","params":[4,5],"id":1}' });
    return ((await res.json()) as { result?: unknown }).result === 9;
  }, { timeoutMs: 60_000, intervalMs: 250, message: 'add answered through the gateway' });
}, 130_000);

describe('the spec examples through its gateway (POST /rpc)', () => {
  const examples = loadExamples('spec-examples.json').filter((e) => !e.mcp);
  it.each(examples.map((e) => [e.name, e] as const))('%s', (_name, example) => expectExampleOverHttp(url, example));
});

it('`warren call add 4 5` prints 9, over AMQP', async () => {
  const env = { AMQP_URL: amqpUrl(), REDIS_URL: redisUrl(), WARREN_NAMESPACE: ns.namespace, WARREN_GATEWAY: 'off' };
  await expect(runCli(['call', 'add', '4', '5'], { env, timeoutMs: 60_000 })).resolves.toMatchObject({ code: 0, stdout: '9\n' });
}, 70_000);

it('`warren call add 4 5` prints 9, through the gateway', async () => {
  const env = { AMQP_URL: '', REDIS_URL: redisUrl(), WARREN_NAMESPACE: ns.namespace, WARREN_GATEWAY: url, WARREN_VIA: 'gateway' };
  await expect(runCli(['call', 'add', '4', '5'], { env, timeoutMs: 60_000 })).resolves.toMatchObject({ code: 0, stdout: '9\n' });
}, 70_000);

it('stops on SIGTERM, exit 0', async () => {
  expect((await child.kill('SIGTERM')).code).toBe(0);
}, 60_000);
