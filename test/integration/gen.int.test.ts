// `warren gen` against the running example system: the committed clients (examples/generated/)
// are what the live rpc.discover gives (`--check`), and every example method answers through the
// generated TypeScript client and through the generated Python module (pika, run from here).
// With WARREN_GEN_UPDATE=1 the first test writes them instead (after changing an example service).
import { spawn } from 'node:child_process';
import path from 'node:path';
import { connectClient, type RpcClient } from '@warren/amqp';
import { Teardown, amqpUrl, redisUrl, spawnTs, waitFor } from '@warren/testkit';
import { errorOf, notifier, proxy, calculateErrors } from '../../examples/generated/warren-api';
import { TestNamespace } from '../support/amqp';
import { deleteRedisKeys, repoRoot, runCli, startServiceProcess } from './helpers';
import { pythonWithPika } from '../support/python';

const td = new Teardown();
const ns = new TestNamespace();
const dir = path.join(repoRoot, 'examples', 'generated');
const outputs = ['--ts', path.join(dir, 'warren-api.ts'), '--python', path.join(dir, 'warren_api.py'), '--openrpc', path.join(dir, 'example-system.openrpc.json')];
const env = { AMQP_URL: amqpUrl(), WARREN_NAMESPACE: ns.namespace, WARREN_GATEWAY: 'off' };
let client: RpcClient;

beforeAll(async () => {
  td.add(() => ns.destroy());
  td.add(() => deleteRedisKeys(`${ns.namespace}:`));
  for (const s of ['calculator', 'audit', 'jobs', 'warren-broker']) ns.service(s);
  const common = { WARREN_NAMESPACE: ns.namespace };
  await Promise.all([
    startServiceProcess(td, 'calculator', common),
    startServiceProcess(td, 'audit', { ...common, AUDIT_TTL_MS: '600000' }),
    startServiceProcess(td, 'jobs', { ...common, JOBS_STEP_MS: '20' }),
  ]);
  // The broker as `npm start` runs it (with Redis), serving rpc.discover over RabbitMQ.
  const broker = spawnTs(path.join(repoRoot, 'broker', 'src', 'main.ts'), [], { AMQP_URL: amqpUrl(), REDIS_URL: redisUrl(), ...common, GATEWAY_PORT: '0', GATEWAY_AUTH: 'none', LOG_LEVEL: 'warn' });
  td.add(() => broker.kill('SIGKILL'));
  client = await connectClient({ urls: amqpUrl(), namespace: ns.namespace, defaultTimeoutMs: 10_000 });
  td.add(() => client.close());
  // Ready once rpc.discover lists the three services (the broker hears them in its first round).
  await waitFor(async () => {
    const doc = await client.call<{ 'x-warren-services': { name: string }[] }>('rpc.discover').catch(() => undefined);
    return ['audit', 'calculator', 'jobs'].every((s) => doc?.['x-warren-services'].some((d) => d.name === s));
  }, { timeoutMs: 30_000, message: 'rpc.discover lists calculator, audit and jobs' });
}, 90_000);
afterAll(() => td.run());

it('the committed clients are those of the live system (warren gen --check)', async () => {
  const update = process.env['WARREN_GEN_UPDATE'] === '1';
  const run = await runCli(['gen', ...outputs, ...(update ? [] : ['--check'])], { env, timeoutMs: 30_000 });
  expect(run.stderr).toBe('');
  expect(run.code).toBe(0);
}, 40_000);

it('answers every example method through the generated TypeScript client', async () => {
  const api = proxy(client);
  expect(await api.add([4, 5])).toBe(9);
  expect(await api.add({ a: 1, b: 2 })).toBe(3);
  expect(await api.subtract([42, 23])).toBe(19);
  expect(await api.subtract({ minuend: 42, subtrahend: 23 })).toBe(19);
  expect(await api.sum([1, 2, 4])).toBe(7);
  expect(await api.get_data()).toEqual(['hello', 5]);
  expect(await api.calculate({ expression: '1+3+6' })).toBe('10');
  const failed = await api.calculate({ expression: '1+' }).catch((err: unknown) => errorOf(err, calculateErrors));
  expect(failed).toMatchObject({ code: -32602 });
  const callId = client.nextCallId();
  const rendered = await api.report.render({ size: 2, title: 'ts' });
  expect(rendered).toMatchObject({ size: 2, pages: 20, report: `ts-${callId}` });
  expect(await api.report.progress([callId])).toMatchObject({ callId, state: 'done', percent: 100 });
  expect(await api.report.progress({ callId: 'nobody' })).toBeNull();
  await notifier(client).notify_sum([5, 6, 7]);
  await waitFor(async () => (await api.audit.recent({ method: 'notify_sum', limit: 10 })).some((e) => JSON.stringify(e['params']) === '[5,6,7]'), { message: 'audit recorded notify_sum' });
  expect(await api.audit.recent([1])).toHaveLength(1);
}, 30_000);

it('answers every example method through the generated Python module', async () => {
  const child = spawn(pythonWithPika(), ['-u', 'demo.py', amqpUrl(), ns.namespace], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  td.add(async () => void child.kill('SIGKILL'));
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (out += d));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  expect(out.split('\n').filter((l) => !l.startsWith('ok ') && l !== '')).toEqual([]);
  expect(out).toMatch(/ok report\.render/);
  expect(code).toBe(0);
}, 60_000);
