// Enqueued jobs against the real RabbitMQ and Redis (docs/jobs.md): a job runs once with no reply,
// its state and outcome are read by id, a method no queue is bound for fails at once, a caller's job
// id enqueued 100 times at once from three clients runs once, a delayed job waits, and a job whose
// worker is SIGKILLed mid-run is redelivered and finishes once.
import { join } from 'node:path';
import { connectClient, type RpcClient } from '@warren/amqp';
import { ErrorCode, wireErrorOf } from '@warren/jsonrpc';
import { amqpUrl, redisUrl, spawnTs, waitFor } from '@warren/testkit';
import { inflightJobStore } from '../src/job-store';
import type { InflightView } from '../src/view';
import { testKeys, workMethods } from './fixtures/methods';
import { TestBed } from './support';

const bed = new TestBed();
const { td, ns, tp } = bed;
let client: RpcClient;
let view: InflightView;

beforeAll(async () => {
  ({ client, view } = await bed.start());
  client.useJobStore(inflightJobStore(view));
  // prefetch 1, one instance: a backlog stays in the queue, so `queued` can be seen.
  await bed.trackedService('jobs', { prefetch: 1 });
});
afterAll(() => bed.close());

const count = async (key: string): Promise<number> => Number((await tp.redis.get(key)) ?? 0);
const starts = (id: string): Promise<number> => count(testKeys(tp.prefix, id).starts);

it('runs a job once, answers nobody, and tells its state and outcome by id', async () => {
  const blocker = await client.enqueue('work', { ms: 800, value: 0 });
  const job = await client.enqueue('work', { ms: 10, value: 21 });
  expect(job).toMatchObject({ duplicate: false });
  // A generated id is a call id: the client id, then 128 random bits.
  expect(job.id).toMatch(new RegExp(`^${client.id}\\.[A-Za-z0-9_-]{22}$`));
  expect(job.deadline).toBeGreaterThan(Date.now() + 3_500_000);
  // Behind the blocker in the one worker's queue: queued, attempt 0.
  expect(await client.job(job.id)).toMatchObject({ id: job.id, state: 'queued', method: 'work', attempt: 0 });
  await waitFor(async () => (await client.job(job.id)).state === 'done', { message: 'job done', timeoutMs: 15_000 });
  const done = await client.job(job.id);
  expect(done).toMatchObject({ id: job.id, state: 'done', attempt: 1, response: { result: { value: 42, attempt: 1 } } });
  expect(done.finishedAt).toBeGreaterThanOrEqual(done.startedAt ?? Infinity);
  expect(await starts(job.id)).toBe(1);
  await waitFor(async () => (await client.job(blocker.id)).state === 'done', { message: 'blocker done' });
  // Nothing came back to this client's reply queue: a job has no reply_to.
  expect(client.stats().lateReplies).toBe(0);
  expect(client.stats().pending).toBe(0);
}, 30_000);

it('fails at once with -32601 when no queue is bound for the method, and frees the id', async () => {
  const err = await client.enqueue('nobody.serves.this', {}, { jobId: 'no-route-1' }).then(() => undefined, (e: unknown) => e);
  expect(err).toMatchObject({ code: 'RPC_NO_ROUTE' });
  expect(wireErrorOf(err)?.code).toBe(ErrorCode.MethodNotFound);
  expect((await client.job('no-route-1')).state).toBe('unknown');
  expect(client.stats().pending).toBe(0);
});

it('a job id enqueued 100 times at once from three clients, beside 100 other jobs, is published once and runs once', async () => {
  const others = await Promise.all([1, 2].map(() => connectClient({ urls: amqpUrl(), namespace: ns.namespace })));
  for (const c of others) {
    td.add(() => c.close());
    c.useJobStore(inflightJobStore(view));
  }
  const clients = [client, ...others];
  const id = `dup-${tp.prefix}`;
  // Under load: 100 other jobs enqueued at the same time, through the same clients, to the same worker.
  const load = Array.from({ length: 100 }, (_, i) => clients[i % 3]!.enqueue('work', { ms: 1, value: i }));
  const results = await Promise.all(Array.from({ length: 100 }, (_, i) => clients[i % 3]!.enqueue('work', { ms: 50, value: i }, { jobId: id })));
  const loaded = await Promise.all(load);
  expect(loaded.every((r) => !r.duplicate)).toBe(true);
  expect(results.filter((r) => !r.duplicate)).toHaveLength(1);
  expect(results.every((r) => r.id === id)).toBe(true);
  // Every duplicate says where the first one is.
  expect(results.filter((r) => r.duplicate).every((r) => r.existing !== undefined && ['queued', 'running', 'done'].includes(r.existing.state))).toBe(true);
  await waitFor(async () => (await client.job(id)).state === 'done', { message: 'job done', timeoutMs: 20_000 });
  await waitFor(async () => (await Promise.all(loaded.map((o) => client.job(o.id)))).every((j) => j.state === 'done'), { message: 'load done', timeoutMs: 20_000 });
  expect(await Promise.all(loaded.map((o) => starts(o.id)))).toEqual(loaded.map(() => 1));
  const winner = results.find((r) => !r.duplicate);
  expect(await client.job(id)).toMatchObject({ state: 'done', response: { id } });
  expect(await starts(id)).toBe(1);
  // Enqueued again while retained: still a no-op that says so.
  const again = await client.enqueue('work', { ms: 1, value: 0 }, { jobId: id });
  expect(again).toMatchObject({ id, duplicate: true, existing: { state: 'done' } });
  expect(await starts(id)).toBe(1);
  expect(winner?.deadline).toBeGreaterThan(Date.now());
}, 30_000);

it('runs a delayed job when due, not before', async () => {
  const sentAt = Date.now();
  const job = await client.enqueue('work', { ms: 1, value: 5 }, { delayMs: 1500, jobId: `later-${tp.prefix}` });
  expect(job.dueAt).toBeGreaterThanOrEqual(sentAt + 1500);
  expect(job.deadline).toBe((job.dueAt ?? 0) + 3_600_000);
  expect((await client.job(job.id)).state).toBe('queued');
  await waitFor(async () => (await client.job(job.id)).state === 'done', { message: 'delayed job done', timeoutMs: 15_000 });
  const done = await client.job(job.id);
  expect(done.startedAt).toBeGreaterThanOrEqual(job.dueAt ?? Infinity);
  expect(await starts(job.id)).toBe(1);
}, 30_000);

it('a job whose worker is SIGKILLed mid-run is redelivered and finishes once', async () => {
  const service = ns.service('jobs-crash');
  const victim = spawnTs(join(__dirname, 'fixtures', 'worker.ts'), [], {
    WORKER_AMQP_URL: amqpUrl(), WORKER_REDIS_URL: redisUrl(), WORKER_NAMESPACE: ns.namespace, WORKER_PREFIX: tp.prefix,
    WORKER_SERVICE: service, WORKER_INSTANCE: 'victim', WORKER_LEASE_MS: '1000', WORKER_METHOD: 'crashwork',
  });
  td.add(() => victim.kill('SIGKILL'));
  await victim.waitForLine(/^ready$/, 20_000);
  const job = await client.enqueue('crashwork', { ms: 60_000, retryMs: 10, value: 8 }, { jobId: `crash-${tp.prefix}` });
  await victim.waitForLine(new RegExp(`^started ${job.id.replace(/[.]/g, '\\.')} 1$`));
  expect(await client.job(job.id)).toMatchObject({ state: 'running', worker: 'victim', attempt: 1 });
  const survivor = await bed.trackedService('jobs-crash', { prefetch: 1, instanceId: 'survivor', methods: workMethods(tp.redis, tp.prefix, undefined, 'crashwork'), tracker: { leaseMs: 1000, heartbeatMs: 250 } });
  await victim.kill('SIGKILL');
  await waitFor(async () => (await client.job(job.id)).state === 'done', { message: 'job finished by the survivor', timeoutMs: 20_000 });
  expect(await client.job(job.id)).toMatchObject({ state: 'done', worker: survivor.service.instanceId, attempt: 2, response: { result: { value: 16, by: 'survivor', attempt: 2 } } });
  const k = testKeys(tp.prefix, job.id);
  expect(await count(k.starts)).toBe(2); // both runs started...
  expect(await count(k.effects)).toBe(1); // ...only the second committed
}, 40_000);

it('a notification nobody subscribes to is reported: a warning by default, RpcNoRouteError when asked', async () => {
  await expect(client.notify('nobody.listens', {})).resolves.toBeUndefined();
  const err = await client.notify('nobody.listens', {}, { ifUnrouted: 'fail' }).then(() => undefined, (e: unknown) => e);
  expect(err).toMatchObject({ code: 'RPC_NO_ROUTE' });
});

it('refuses a job id outside the id alphabet, before anything is reserved or sent', async () => {
  await expect(client.enqueue('work', {}, { jobId: '-x' })).rejects.toThrow(TypeError);
  await expect(client.enqueue('work', {}, { jobId: 'a b' })).rejects.toThrow(TypeError);
  await expect(client.enqueue('work', {}, { timeoutMs: 0 })).rejects.toThrow(RangeError);
});

