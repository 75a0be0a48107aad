// `warren call` against a service with no instance running: the CLI names the
// missing service at once (-32002) instead of waiting out the deadline. The
// CLI starts after the calculator stopped, so it never heard it announce; it
// learns the method's service from the method directory the calculator wrote
// in Redis (docs/protocol.md, "Method directory"), and the consumer count from
// a passive declare of its queue.
import { Redis } from 'ioredis';
import { Teardown, amqpUrl, redisUrl, waitFor } from '@warren/testkit';
import { TestNamespace } from '../support/amqp';
import { deleteRedisKeys, runCli, startServiceProcess } from './helpers';

const td = new Teardown();
const ns = new TestNamespace();
let env: Record<string, string>;
let redis: Redis;

beforeAll(async () => {
  td.add(() => ns.destroy());
  td.add(() => deleteRedisKeys(`${ns.namespace}:`));
  ns.service('calculator');
  redis = new Redis(redisUrl(), { maxRetriesPerRequest: 1 });
  td.add(() => void redis.disconnect());
  env = { AMQP_URL: amqpUrl(), REDIS_URL: redisUrl(), WARREN_NAMESPACE: ns.namespace, WARREN_GATEWAY: 'off' };
}, 30_000);
afterAll(() => td.run());

/** Starts the calculator, checks it answers through the CLI, and waits until its methods are in the directory. */
async function calculatorRan(stop: NodeJS.Signals): Promise<void> {
  const calculator = await startServiceProcess(td, 'calculator', { WARREN_NAMESPACE: ns.namespace });
  await expect(runCli(['call', 'add', '4', '5'], { env })).resolves.toMatchObject({ code: 0, stdout: '9\n' });
  await waitFor(async () => (await redis.get(`${ns.namespace}:method:add`)) !== null);
  await calculator.kill(stop);
}

async function timedCall(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string; ms: number }> {
  const started = Date.now();
  const run = await runCli(args, { env, timeoutMs: 40_000 });
  return { ...run, ms: Date.now() - started };
}

it('records the calculator in the method directory in Redis, as protocol.md describes', async () => {
  await calculatorRan('SIGTERM');
  const entry = JSON.parse((await redis.get(`${ns.namespace}:method:add`)) ?? 'null') as Record<string, unknown>;
  expect(entry).toMatchObject({ v: 1, service: 'calculator', jobStyle: false });
  expect(typeof entry['at']).toBe('number');
  const ttl = await redis.pttl(`${ns.namespace}:method:add`);
  expect(ttl).toBeGreaterThan(6 * 24 * 3_600_000);
}, 60_000);

it.each(['SIGTERM', 'SIGKILL'] as const)('with the calculator stopped (%s), `warren call add 4 5` exits 1 with -32002 naming calculator, long before the 30 s deadline', async (signal) => {
  await calculatorRan(signal);
  const r = await timedCall(['call', 'add', '4', '5']);
  expect(r.code).toBe(1);
  expect(r.stdout).toBe('');
  // The CLI's own gate failed it (RpcNoConsumersError): its wire code and message, then its local code.
  expect(r.stderr).toMatch(/^error -32002: Service unavailable: no instance of calculator is running \(RPC_NO_CONSUMERS\)$/m);
  // A generous bound (the figure, about a second, is in the report): the point is not waiting out the 30 s deadline.
  expect(r.ms).toBeLessThan(5000);
  const json = await runCli(['--json', 'call', 'add', '4', '5'], { env });
  expect(JSON.parse(json.stdout)).toEqual({ jsonrpc: '2.0', error: { code: -32002, message: 'Service unavailable: no instance of calculator is running', data: { reason: 'no_consumers', service: 'calculator', method: 'add', queued: 0 } }, id: 1 });
}, 60_000);

it('names the missing service for each batch entry too', async () => {
  const r = await runCli(['--json', 'batch', '-'], { env, input: '[{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1},{"jsonrpc":"2.0","method":"no.such.method","id":2}]' });
  expect(r.code).toBe(1);
  const [add, missing] = JSON.parse(r.stdout) as { id: number; error: { code: number; data?: { service?: string } } }[];
  expect(add).toMatchObject({ id: 1, error: { code: -32002, data: { service: 'calculator' } } });
  expect(missing).toMatchObject({ id: 2, error: { code: -32601 } });
}, 30_000);

it('lets a --persistent (job-style) call queue while no worker runs, as documented: it waits for its deadline instead', async () => {
  const r = await timedCall(['call', 'add', '4', '5', '--persistent', '--timeout', '1000']);
  expect(r.code).toBe(1);
  expect(r.stderr).toMatch(/^error -32001/);
}, 60_000);

it('still answers -32601 at once for a method nobody ever recorded', async () => {
  const r = await timedCall(['call', 'no.such.method']);
  expect(r.code).toBe(1);
  expect(r.stderr).toMatch(/^error -32601/);
  expect(r.ms).toBeLessThan(5000);
}, 30_000);
