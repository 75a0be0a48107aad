// `warren schedule add` against a broker with schedules in Redis and the calculator on the real
// RabbitMQ (docs/cli.md "warren schedule", docs/scheduling.md): the broker's schedule.add refuses
// a method no running service serves and params the method's schema refuses (-32602, exit 1,
// a message saying which); `--allow-unserved` accepts a method that is not up yet.
import { startService } from '@warren/amqp';
import { silentLogger } from '@warren/logger';
import { RedisScheduleStore } from '@warren/schedules';
import { Teardown, amqpUrl, redisUrl, waitFor } from '@warren/testkit';
import { startBroker } from '../../../broker/src';
import { schedulesWiring } from '../../../broker/src/schedules-wiring';
import { TestNamespace } from '../../../test/support/amqp';
import { deleteRedisKeys, runCli } from '../../../test/integration/helpers';
import { calculatorMethods } from '../../../services/calculator/src/methods';

const td = new Teardown();
const ns = new TestNamespace();
let env: Record<string, string>;
let store: RedisScheduleStore;

beforeAll(async () => {
  td.add(() => ns.destroy());
  td.add(() => deleteRedisKeys(`{${ns.namespace}:sched}`));
  const urls = amqpUrl();
  store = new RedisScheduleStore({ url: redisUrl(), keyPrefix: ns.namespace });
  td.add(() => store.close());
  // Only schedule.* served: no scheduler fires them (every one here is added paused anyway).
  const schedules = schedulesWiring(store, { run: false });
  const broker = await startBroker({ urls, namespace: ns.namespace, serviceName: ns.service('warren-broker'), port: 0, defaultMetrics: false, logger: silentLogger(), ...schedules.options });
  td.add(() => broker.close());
  schedules.attach(broker, silentLogger());
  td.add(() => schedules.close());
  // And one method with an enum, for the allowed values a refusal lists.
  const paint = { params: { type: 'object', properties: { color: { enum: ['red', 'green'] } }, required: ['color'] }, handler: () => 'painted' };
  const calc = await startService({ urls, namespace: ns.namespace, name: ns.service('calculator'), methods: { ...calculatorMethods, 'paint.wall': paint } });
  td.add(() => calc.close());
  await waitFor(() => broker.gateway.catalogue.current().methods.has('paint.wall'), { timeoutMs: 10_000, message: 'the broker heard the calculator' });
  env = { AMQP_URL: urls, REDIS_URL: redisUrl(), WARREN_NAMESPACE: ns.namespace, WARREN_GATEWAY: 'off' };
}, 30_000);
afterAll(() => td.run());

const warren = (args: string[]) => runCli(['schedule', 'add', ...args, '--every', '60000', '--paused'], { env });

it('refuses a method no running service serves, saying so, with a non-zero exit; nothing is stored', async () => {
  const r = await warren(['nightly', 'reports.buidl']);
  expect(r.code).toBe(1);
  expect(r.stderr).toMatch(/^error -32602: method "reports\.buidl" is not served by any running service .*--allow-unserved/);
  expect(r.stderr).toContain('"method_not_served"');
  expect(await store.get('nightly')).toBeUndefined();
});

it('refuses params the method\'s params schema refuses, naming the failures; nothing is stored', async () => {
  const r = await warren(['adder', 'add', '1', '"two"']);
  expect(r.code).toBe(1);
  // One readable line a failure (path, what was expected), not the answer's data as raw JSON.
  const lines = r.stderr.split('\n');
  expect(lines[0]).toMatch(/^error -32602: params do not fit the params schema of "add"/);
  expect(lines).toContain('  params/1: must be number (type)');
  expect(r.stderr).not.toMatch(/[{}]|"details"/);
  expect(await store.get('adder')).toBeUndefined();
});

it('lists the allowed values of an enum the params miss, one line a failure', async () => {
  const r = await warren(['painter', 'paint.wall', '{"color":"blue"}']);
  expect(r.code).toBe(1);
  expect(r.stderr.split('\n').slice(1)).toEqual(['  params/color: must be one of "red", "green" (enum)', '']);
  expect(await store.get('painter')).toBeUndefined();
});

it('adds a served method with fitting params, and an unserved one with --allow-unserved', async () => {
  await expect(warren(['adder', 'add', '1', '2'])).resolves.toMatchObject({ code: 0, stdout: 'added adder\n' });
  await expect(warren(['later', 'reports.build', '--allow-unserved'])).resolves.toMatchObject({ code: 0, stdout: 'added later\n' });
  expect((await store.get('later'))?.method).toBe('reports.build');
});
