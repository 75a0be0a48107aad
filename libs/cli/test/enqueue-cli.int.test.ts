// `warren enqueue`, `warren job show` and the notify warnings as a child process on the real RabbitMQ
// and Redis (docs/jobs.md): a job queued for later runs when due and once, its id de-duplicated and
// its outcome shown by id; a method no queue is bound for fails at once; a notification to a served
// method nobody subscribes to exits 1 with a warning that names `warren enqueue`.
import { startService } from '@warren/amqp';
import { RedisDirectory, createRedisTracker } from '@warren/inflight';
import { Teardown, amqpUrl, redisUrl, waitFor } from '@warren/testkit';
import { TestNamespace } from '../../../test/support/amqp';
import { deleteRedisKeys, runCli } from '../../../test/integration/helpers';

const td = new Teardown();
const ns = new TestNamespace().withDelayChain();
const runs: unknown[] = [];
let env: Record<string, string>;

beforeAll(async () => {
  td.add(() => ns.destroy());
  td.add(() => deleteRedisKeys(`${ns.namespace}:`));
  const directory = new RedisDirectory({ redis: redisUrl(), keyPrefix: ns.namespace });
  td.add(() => directory.close());
  const tracker = createRedisTracker({ redis: redisUrl(), keyPrefix: ns.namespace, heartbeatMs: 200, leaseMs: 3000 });
  const service = await startService({
    urls: amqpUrl(), namespace: ns.namespace, name: ns.service('reports'), tracker, directory, announceIntervalMs: 3_600_000,
    methods: { 'report.render': { handler: (p: unknown) => (runs.push(p), { pages: (p as { size: number }).size }) } },
  });
  td.add(() => service.close());
  env = { AMQP_URL: amqpUrl(), REDIS_URL: redisUrl(), WARREN_NAMESPACE: ns.namespace, WARREN_GATEWAY: 'off' };
}, 30_000);
afterAll(() => td.run());

const warren = (args: string[]) => runCli(args, { env });

it('enqueue --in queues a job that runs when due, once; the same --id again is a duplicate; job show tells its outcome', async () => {
  const sent = Date.now();
  const first = await warren(['--json', 'enqueue', 'report.render', '{"size":2}', '--in', '6s', '--id', `r-${ns.namespace}`]);
  expect(first.code).toBe(0);
  expect(JSON.parse(first.stdout)).toMatchObject({ id: `r-${ns.namespace}`, duplicate: false, method: 'report.render' });
  const again = await warren(['enqueue', 'report.render', '{"size":3}', '--id', `r-${ns.namespace}`]);
  expect(again).toMatchObject({ code: 0 });
  // Each CLI run takes a second or two on a busy machine: the job, due in 6 s, is still queued.
  expect(again.stdout).toMatch(new RegExp(`^duplicate r-${ns.namespace}: already queued, not queued again\\n$`));
  expect(runs).toEqual([]);
  await waitFor(() => runs.length === 1, { timeoutMs: 20_000, message: 'job ran' });
  expect(Date.now() - sent).toBeGreaterThanOrEqual(6000);
  expect(runs).toEqual([{ size: 2 }]);
  await waitFor(async () => JSON.parse((await warren(['--json', 'job', 'show', `r-${ns.namespace}`])).stdout).state === 'done', { message: 'job done' });
  const shown = await warren(['job', 'show', `r-${ns.namespace}`]);
  expect(shown.stdout).toMatch(/done/);
  expect(shown.stdout).toMatch(/"pages": 2/);
}, 40_000);

it('a generated id is printed; a method no queue is bound for fails at once with -32601', async () => {
  const queued = await warren(['enqueue', 'report.render', '{"size":1}']);
  expect(queued.code).toBe(0);
  expect(queued.stdout).toMatch(/^queued [A-Za-z0-9_-]+\.[A-Za-z0-9_-]{22}\n$/);
  const missing = await warren(['enqueue', 'nobody.serves', '{}']);
  expect(missing.code).toBe(1);
  expect(missing.stderr).toMatch(/error -32601/);
}, 30_000);

it('notify to a served method nobody subscribes to exits 1, says it was dropped and names warren enqueue', async () => {
  const r = await warren(['notify', 'report.render', '{"size":2}']);
  expect(r.code).toBe(1);
  expect(r.stdout).toBe('dropped report.render: no subscriber\n');
  expect(r.stderr).toMatch(/nobody subscribes to it: RabbitMQ dropped it; report\.render is a method of .*reports: to queue a job on it, use `warren enqueue report\.render \.\.\.`/);
}, 30_000);
