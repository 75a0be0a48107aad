// The jobs side of `warren` as a child process on the real RabbitMQ and Redis: `call --progress`
// prints the handler's ctx.progress, `inflight` has a progress column, `status` shows progress and
// the attempt, Invalid params answers print their schema failures as lines, and `dlq ls|show|replay
// |purge` act on a dead-lettered job through the broker's dlq.* methods.
import amqp from 'amqplib';
import { RetryableError, connectClient, startService } from '@warren/amqp';
import { InflightView, createRedisTracker } from '@warren/inflight';
import { Teardown, amqpUrl, redisUrl, waitFor } from '@warren/testkit';
import { startBroker } from '../../../broker/src';
import { TestNamespace, queueDepth } from '../../../test/support/amqp';
import { deleteRedisKeys, runCli } from '../../../test/integration/helpers';

const td = new Teardown();
const ns = new TestNamespace();
const service = ns.service('jobs');
let env: Record<string, string>;
/** Lets the running `steps` call take its next step. */
const gates: (() => void)[] = [];
let healed = false;
/** The wait of `patient` between its attempts: long enough for a spawned CLI to see it waiting. */
const patientWaitMs = 8000;

beforeAll(async () => {
  td.add(() => ns.destroy());
  td.add(() => deleteRedisKeys(`${ns.namespace}:`));
  td.add(async () => {
    const model = await amqp.connect(amqpUrl());
    const ch = await model.createChannel();
    for (const ms of [100, patientWaitMs]) await ch.deleteQueue(ns.names.retryQueue(service, ms));
    await model.close();
  });
  const broker = await startBroker({ urls: amqpUrl(), namespace: ns.namespace, serviceName: ns.service('warren-broker'), port: 0, defaultMetrics: false });
  td.add(() => broker.close());
  const tracker = createRedisTracker({ redis: redisUrl(), keyPrefix: ns.namespace, heartbeatMs: 100, leaseMs: 3000 });
  const jobs = await startService({
    urls: amqpUrl(),
    namespace: ns.namespace,
    name: service,
    instanceId: 'worker-1',
    tracker,
    methods: {
      steps: {
        params: { type: 'object', properties: { n: { type: 'integer', minimum: 1, maximum: 5 }, gated: { type: 'boolean' } }, required: ['n'], additionalProperties: false },
        handler: async (params, ctx) => {
          const { n, gated } = params as { n: number; gated?: boolean };
          for (let i = 1; i <= n; i++) {
            if (gated) await new Promise<void>((resolve) => gates.push(resolve));
            else await new Promise((resolve) => setTimeout(resolve, 300));
            ctx.progress(i / n, `page ${i} of ${n}`);
          }
          return { pages: n };
        },
      },
      patient: {
        retry: { attempts: 2, backoffMs: patientWaitMs },
        handler: (_params, ctx) => {
          if (ctx.attempt < 2) throw new RetryableError('come back later');
          return 'served';
        },
      },
      doomed: {
        retry: { attempts: 2, backoffMs: 100 },
        handler: () => {
          if (!healed) throw new RetryableError('printer on fire');
          return 'printed';
        },
      },
    },
  });
  td.add(() => jobs.close());
  env = { AMQP_URL: amqpUrl(), REDIS_URL: redisUrl(), WARREN_NAMESPACE: ns.namespace, WARREN_GATEWAY: 'off' };
}, 30_000);
afterAll(() => td.run());

const warren = (args: string[]) => runCli(args, { env });

describe('warren call --progress', () => {
  it('prints each progress report on stderr (a line each, not a terminal) and the result on stdout', async () => {
    const r = await warren(['call', 'steps', '{"n":3}', '--progress']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ pages: 3 });
    const lines = r.stderr.trim().split('\n');
    expect(lines).toEqual([
      expect.stringMatching(/^progress 33% page 1 of 3 \(elapsed \S+, eta \S+\)$/),
      expect.stringMatching(/^progress 67% page 2 of 3 /),
      expect.stringMatching(/^progress 100% page 3 of 3 /),
    ]);
  });

  it('prints no progress without --progress when stderr is not a terminal', async () => {
    const r = await warren(['call', 'steps', '{"n":1}']);
    expect(r).toMatchObject({ code: 0, stderr: '' });
  });

  it('prints the JSON Schema failures of Invalid params as readable lines', async () => {
    const r = await warren(['call', 'steps', '{"n":9,"x":1}']);
    expect(r.code).toBe(1);
    const lines = r.stderr.trim().split('\n');
    expect(lines[0]).toBe('error -32602: Invalid params');
    expect(lines.slice(1).sort()).toEqual(['  params/n: must be <= 5 (maximum)', '  params: must NOT have additional properties (additionalProperties)'].sort());
  });
});

it('warren inflight has a progress column and warren status shows progress and the attempt', async () => {
  const call = warren(['call', 'steps', '{"n":2,"gated":true}', '--show-id', '--no-progress']);
  await waitFor(() => gates.length === 1, { message: 'first step waiting', timeoutMs: 10_000 });
  gates.shift()?.();
  await waitFor(() => gates.length === 1, { message: 'second step waiting', timeoutMs: 10_000 });
  let table = '';
  await waitFor(async () => (table = (await warren(['inflight', '--service', service])).stdout).includes('page 1 of 2'), { message: 'progress in the table', timeoutMs: 10_000 });
  expect(table.split('\n')[0]).toMatch(/call id +service +method +worker +attempt +age +deadline in +progress +state/);
  expect(table).toMatch(/\[█{5}░{5}\] 50% page 1 of 2/);
  // The row of this call (an earlier test's call of the same service may be listed before it).
  const row = table.split('\n').find((line) => line.includes('page 1 of 2')) ?? '';
  const callId = /(\S+) +jobs/.exec(row)?.[1] as string;
  const status = await warren(['status', callId]);
  // The whole result, so a failure shows stderr and the exit code too.
  expect(status).toMatchObject({ code: 0, stdout: expect.stringMatching(/running/) as unknown });
  expect(status.stdout).toMatch(/attempt +1/);
  expect(status.stdout).toMatch(/progress +\[█{10}░{10}\] 50% page 1 of 2/);
  gates.shift()?.();
  await expect(call).resolves.toMatchObject({ code: 0 });
}, 90_000);

it('warren inflight lists a call waiting in a delay queue between attempts as retrying, with its attempt', async () => {
  const client = await connectClient({ urls: amqpUrl(), namespace: ns.namespace, defaultTimeoutMs: 30_000 });
  td.add(() => client.close());
  const callId = client.nextCallId();
  const answer = client.call('patient', {}, { id: callId });
  let table = '';
  await waitFor(async () => (table = (await warren(['inflight', '--service', service])).stdout).includes(callId), { message: 'the waiting call in the table', timeoutMs: patientWaitMs });
  const row = table.split('\n').find((l) => l.startsWith(callId)) ?? '';
  expect(row).toMatch(/ patient +worker-1 +1 .* retrying (in \S+|due now)$/);
  const json = JSON.parse((await warren(['--json', 'inflight', '--service', service])).stdout) as { calls: { callId: string; state: string; nextTryAt?: number }[] };
  const listed = json.calls.find((c) => c.callId === callId);
  // Listed until it runs again: seen waiting, or already gone if the wait ended meanwhile.
  if (listed) expect(listed).toMatchObject({ state: 'retrying', nextTryAt: expect.any(Number) });
  await expect(answer).resolves.toBe('served');
}, 60_000);

it('warren dlq ls, show, replay and purge act on a dead-lettered job', async () => {
  // Spawning the CLI is slow here (tsx): the steps in between go through this process's own client and view.
  const client = await connectClient({ urls: amqpUrl(), namespace: ns.namespace, defaultTimeoutMs: 20_000 });
  td.add(() => client.close());
  const view = new InflightView({ redis: redisUrl(), keyPrefix: ns.namespace });
  td.add(() => view.close());
  await expect(client.call('doomed')).rejects.toMatchObject({ code: -32603 });
  await waitFor(async () => (await queueDepth(ns.names.deadLetterQueue(service))) === 1, { message: 'dead-lettered' });
  const ls = await warren(['dlq', 'ls', '--service', service]);
  expect(ls.code).toBe(0);
  expect(ls.stdout).toMatch(/id +service +method +reason +code +attempts +dead-lettered +params/);
  expect(ls.stdout).toMatch(/doomed +retries_exhausted +-32603 +2 /);
  const id = /^(\S+) +jobs/m.exec(ls.stdout)?.[1] as string;
  const show = await warren(['--json', 'dlq', 'show', service, id]);
  expect(JSON.parse(show.stdout)).toMatchObject({ id, method: 'doomed', reason: 'retries_exhausted', request: { method: 'doomed' } });

  healed = true;
  const replay = await warren(['dlq', 'replay', service, id]);
  expect(replay.stdout).toMatch(/^replayed 1 {2}call id: replay\.\S+\n$/);
  const newId = /call id: (\S+)/.exec(replay.stdout)?.[1] as string;
  await waitFor(async () => (await view.status(newId)).state === 'done', { message: 'replayed call done', timeoutMs: 10_000 });
  expect(await queueDepth(ns.names.deadLetterQueue(service))).toBe(0);

  healed = false;
  await expect(client.call('doomed')).rejects.toMatchObject({ code: -32603 });
  await waitFor(async () => (await queueDepth(ns.names.deadLetterQueue(service))) === 1, { message: 'dead-lettered again' });
  await expect(warren(['dlq', 'purge', service])).resolves.toMatchObject({ code: 0, stdout: 'purged 1\n' });
}, 120_000);
