// Enqueued jobs in memory (embedded mode, docs/jobs.md): over a MemoryBroker and a
// MemoryInflightStore, a job runs once with no reply, its id is de-duplicated (50 enqueues of one id
// at once publish one), its outcome is read by id, and a method no queue is bound for fails at once.
// Without a job store, a job still runs, and a duplicate id is told only while this client has it on the wire.
import { connectClient, startService, type RpcClient, type WarrenService } from '@warren/amqp';
import { MemoryBroker } from '@warren/amqp-transport';
import { ErrorCode, RpcNoRouteError, wireErrorOf } from '@warren/jsonrpc';
import type { Logger } from '@warren/logger';
import { waitFor } from '@warren/testkit';
import { inflightJobStore } from '../src/job-store';
import { createMemoryTracker, memoryInflightView } from '../src/memory';
import { MemoryInflightStore } from '../src/memory-store';

const bus = new MemoryBroker();
const memory = new MemoryInflightStore();
const view = memoryInflightView(memory);
const runs = new Map<string, number>();
let service: WarrenService;
let client: RpcClient;

beforeAll(async () => {
  service = await startService({
    connection: bus.connect(), name: 'reports', tracker: createMemoryTracker(memory), announceIntervalMs: 60_000,
    methods: { render: { handler: (p: unknown, ctx) => (runs.set(ctx.callId, (runs.get(ctx.callId) ?? 0) + 1), { pages: (p as { size: number }).size }) } },
  });
  client = await connectClient({ connection: bus.connect() });
  client.useJobStore(inflightJobStore(view));
});
afterAll(async () => {
  await client.close();
  await service.close();
  await view.close();
  await bus.close();
});

it('runs a job once and tells its outcome by id', async () => {
  const job = await client.enqueue('render', { size: 3 });
  expect(job.duplicate).toBe(false);
  await waitFor(async () => (await client.job(job.id)).state === 'done', { message: 'job done' });
  expect(await client.job(job.id)).toMatchObject({ id: job.id, state: 'done', method: 'render', attempt: 1, response: { result: { pages: 3 }, id: job.id } });
  expect(runs.get(job.id)).toBe(1);
  expect(client.stats()).toMatchObject({ pending: 0, lateReplies: 0 });
});

it('50 enqueues of one id at once publish one job, which runs once', async () => {
  const results = await Promise.all(Array.from({ length: 50 }, (_, i) => client.enqueue('render', { size: i }, { jobId: 'mem-dup' })));
  expect(results.filter((r) => !r.duplicate)).toHaveLength(1);
  await waitFor(async () => (await client.job('mem-dup')).state === 'done', { message: 'job done' });
  expect(runs.get('mem-dup')).toBe(1);
});

it('a method no queue is bound for fails at once with -32601, and its id is free again', async () => {
  const err = await client.enqueue('nobody', {}, { jobId: 'mem-none' }).then(() => undefined, (e: unknown) => e);
  expect(wireErrorOf(err)?.code).toBe(ErrorCode.MethodNotFound);
  expect((await client.job('mem-none')).state).toBe('unknown');
});

it('without a job store a job still runs, and job(id) says a store is needed', async () => {
  const bare = await connectClient({ connection: bus.connect() });
  try {
    const job = await bare.enqueue('render', { size: 1 }, { jobId: 'mem-bare' });
    expect(job.duplicate).toBe(false);
    await waitFor(() => runs.get('mem-bare') === 1, { message: 'job ran' });
    await expect(bare.job('mem-bare')).rejects.toThrow(/no job store/);
    // The tracked worker still runs one id once: a second copy is answered from the stored outcome, not run.
    const fromStore = service.stats().answeredFromStore;
    await bare.enqueue('render', { size: 1 }, { jobId: 'mem-bare' });
    await waitFor(() => service.stats().answeredFromStore === fromStore + 1, { message: 'second copy answered from the store' });
    expect(runs.get('mem-bare')).toBe(1);
  } finally {
    await bare.close();
  }
});

it('a notification nobody subscribes to is warned about once per method (then at debug), or rejected with ifUnrouted: fail', async () => {
  const lines: { level: string; method: unknown }[] = [];
  const log = (level: string) => (obj: { method?: unknown }) => void lines.push({ level, method: obj.method });
  const logger = { child: () => logger, warn: log('warn'), debug: log('debug'), info: log('info'), error: log('error') } as unknown as Logger;
  const noisy = await connectClient({ connection: bus.connect(), logger });
  try {
    await noisy.notify('nobody.listens', {});
    await noisy.notify('nobody.listens', {});
    await noisy.notify('render', {});
    const dropped = lines.filter((l) => l.level === 'warn' || l.level === 'debug');
    expect(dropped).toEqual([{ level: 'warn', method: 'nobody.listens' }, { level: 'debug', method: 'nobody.listens' }, { level: 'warn', method: 'render' }]);
    await expect(noisy.notify('render', {}, { ifUnrouted: 'fail' })).rejects.toBeInstanceOf(RpcNoRouteError);
  } finally {
    await noisy.close();
  }
});
