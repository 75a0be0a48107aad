// The jobs worker pool as it runs in production: its main.ts in child
// processes, a durable quorum queue, persistent requests, the in-flight
// tracker in Redis. Workers are SIGKILLed mid-job to show redelivery (the job
// finishes once, the caller gets one answer) and, when every attempt's worker
// dies, dead-lettering with a WorkerLost answer.
import { connectClient, type RpcClient } from '@warren/amqp';
import { RedisEventLog } from '@warren/eventlog';
import { InflightView } from '@warren/inflight';
import { ErrorCode, WorkerLostError } from '@warren/jsonrpc';
import { Teardown, amqpUrl, redisUrl, waitFor, type TsChild } from '@warren/testkit';
import { TestNamespace, queueDepth } from '../../../test/support/amqp';
import { deleteRedisKeys, startServiceProcess, waitForLog } from '../../../test/integration/helpers';
import { completedStream, type Completion, type JobProgress, type RenderResult } from '../src/methods';

const td = new Teardown();
afterAll(() => td.run());

/** A namespace of its own per scenario: workers of one never take jobs of another. */
async function scenario(): Promise<{ ns: TestNamespace; client: RpcClient; worker: (id: string) => Promise<TsChild>; completions: (callId: string) => Promise<Completion[]>; view: InflightView }> {
  const ns = new TestNamespace();
  td.add(() => ns.destroy());
  td.add(() => deleteRedisKeys(`${ns.namespace}:`));
  ns.service('jobs');
  const env = { WARREN_NAMESPACE: ns.namespace, PREFETCH: '1', JOBS_STEP_MS: '200', JOBS_LEASE_MS: '1500', JOBS_MAX_ATTEMPTS: '2' };
  // Persistent requests: the job survives a RabbitMQ restart along with its durable queue.
  const client = await connectClient({ urls: amqpUrl(), namespace: ns.namespace, defaultTimeoutMs: 30_000, persistent: true });
  td.add(() => client.close());
  const log = new RedisEventLog({ url: redisUrl(), keyPrefix: ns.namespace });
  td.add(() => log.close());
  const view = new InflightView({ redis: redisUrl(), keyPrefix: ns.namespace });
  td.add(() => view.close());
  return {
    ns,
    client,
    view,
    worker: async (id) => {
      const child = await startServiceProcess(td, 'jobs', { ...env, INSTANCE_ID: id });
      // A worker that started while Redis was slow runs calls untracked (by design: Redis is an aid, not a gate);
      // these tests are about tracked workers, so make sure that is what they got.
      expect(child.stdout.map((l) => JSON.parse(l) as { msg?: string; tracking?: string }).find((l) => l.msg === 'service ready')?.tracking).toBe('tracking');
      return child;
    },
    completions: async (callId) => ((await log.recent(completedStream(`${ns.namespace}.jobs`), 1000)) as unknown as Completion[]).filter((c) => c.callId === callId),
  };
}

it('renders a report in size steps, its ctx.progress readable by call id from any instance (report.progress, inflight status) while it runs', async () => {
  const { client, worker, completions, view } = await scenario();
  await Promise.all([worker('w1'), worker('w2')]);
  const callId = client.nextCallId();
  const job = client.call<RenderResult>('report.render', { size: 6, title: 'q3' }, { id: 'job-1' });
  await waitFor(async () => ((await client.call<JobProgress | null>('report.progress', { callId })) ?? { percent: 0 }).percent >= 33, { timeoutMs: 10_000 });
  const mid = await client.call<JobProgress>('report.progress', [callId]);
  expect(mid).toMatchObject({ callId, state: 'running' });
  expect(mid.message).toMatch(/^page [2-5] of 6$/);
  expect((await view.status(callId)).progress?.message).toMatch(/^page \d of 6$/);
  expect(mid.percent).toBeGreaterThan(0);
  expect(mid.percent).toBeLessThan(100);
  // Listed once a heartbeat of its worker names it (every JOBS_LEASE_MS / 3 here).
  await waitFor(async () => (await view.list()).some((c) => c.callId === callId && c.method === 'report.render'), { timeoutMs: 5000 });
  const result = await job;
  expect(result).toMatchObject({ report: `q3-${callId}`, size: 6, pages: 60, attempt: 1 });
  expect(result.tookMs).toBeGreaterThanOrEqual(6 * 200 - 50);
  await expect(client.call('report.progress', { callId })).resolves.toMatchObject({ state: 'done', percent: 100 });
  expect(await completions(callId)).toHaveLength(1);
  await expect(view.status(callId)).resolves.toMatchObject({ state: 'done' });
}, 40_000);

it('finishes a job once when its worker is killed mid-job: redelivered to another worker, one answer', async () => {
  const { ns, client, worker, completions, view } = await scenario();
  const victim = await worker('victim');
  const callId = client.nextCallId();
  const job = client.call<RenderResult>('report.render', { size: 25 }, { id: 'job-2' });
  await waitForLog(victim, 'render progress', { callId, step: 2 });
  const survivor = await worker('survivor');
  await victim.kill('SIGKILL');
  const result = await job;
  // Taken over once the dead worker's lease ran out: the second attempt, on the survivor.
  expect(result).toMatchObject({ renderedBy: 'survivor', attempt: 2 });
  expect(await completions(callId)).toEqual([expect.objectContaining({ instanceId: 'survivor', attempt: 2 })]);
  expect(survivor.stdout.filter((l) => l.includes('"msg":"render finished"'))).toHaveLength(1);
  await expect(view.status(callId)).resolves.toMatchObject({ state: 'done', worker: 'survivor', attempt: 2 });
  expect(await queueDepth(ns.names.serviceQueue('jobs'))).toBe(0);
  expect(await queueDepth(ns.names.deadLetterQueue('jobs'))).toBe(0);
}, 60_000);

it('dead-letters a job whose worker dies on every attempt and answers the caller WorkerLost (-32005)', async () => {
  const { ns, client, worker, completions, view } = await scenario();
  const callId = client.nextCallId();
  const first = await worker('first');
  const job = client.call<RenderResult>('report.render', { size: 100 }, { id: 'job-3' }).catch((e: unknown) => e);
  await waitForLog(first, 'render started', { callId });
  const second = await worker('second');
  await first.kill('SIGKILL');
  // JOBS_MAX_ATTEMPTS=2: the second worker takes it over (attempt 2) once the first one's lease ran out...
  await waitForLog(second, 'render started', { callId, attempt: 2 });
  const third = await worker('third');
  await second.kill('SIGKILL');
  // ...and when it dies too, the third worker answers WorkerLost without running it, and dead-letters it.
  const err = await job;
  if (!(err instanceof WorkerLostError)) {
    const logs = (w: TsChild): string[] => w.stdout.filter((l) => !l.includes('render progress'));
    throw new Error(`expected WorkerLost, got ${JSON.stringify(err)}\nfirst: ${logs(first).join('\n')}\nsecond: ${logs(second).join('\n')}\nthird: ${logs(third).join('\n')}`);
  }
  expect(err).toBeInstanceOf(WorkerLostError);
  expect(err).toMatchObject({ code: ErrorCode.WorkerLost });
  await waitFor(async () => (await queueDepth(ns.names.deadLetterQueue('jobs'))) === 1, { timeoutMs: 5000 });
  expect(third.stdout.some((l) => l.includes('"msg":"render started"'))).toBe(false);
  expect(await completions(callId)).toEqual([]);
  await expect(view.status(callId)).resolves.toMatchObject({ state: 'failed' });
}, 60_000);
