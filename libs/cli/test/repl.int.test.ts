// `warren repl` over RabbitMQ and Redis against real services (no broker: completion comes from
// the services' own announcements), driven key by key through runRepl's streams: completion,
// a call and its answer, an error with its code, notify, and inflight/status/cancel of a running job.
import path from 'node:path';
import { connectClient, startService, type RpcClient } from '@warren/amqp';
import { MemoryEventLog } from '@warren/eventlog';
import { InflightView, createRedisTracker } from '@warren/inflight';
import { CancelledError, type JsonValue } from '@warren/jsonrpc';
import { Teardown, amqpUrl, redisUrl, waitFor } from '@warren/testkit';
import { TestNamespace } from '../../../test/support/amqp';
import { deleteRedisKeys } from '../../../test/integration/helpers';
import { calculatorMethods } from '../../../services/calculator/src/methods';
import { jobsMethods } from '../../../services/jobs/src/methods';
import { driveRepl, tempDir, type ReplDriver } from './support/repl-driver';

const td = new Teardown();
const ns = new TestNamespace();
const heard: JsonValue[] = [];
let client: RpcClient;
let historyFile: string;

beforeAll(async () => {
  td.add(() => ns.destroy());
  td.add(() => deleteRedisKeys(`${ns.namespace}:`));
  const common = { urls: amqpUrl(), namespace: ns.namespace, announceIntervalMs: 3_600_000 };
  const calc = await startService({ ...common, name: ns.service('calculator'), methods: calculatorMethods });
  td.add(() => calc.close());
  const listener = await startService({ ...common, name: ns.service('listener'), notifications: { notify_hello: { handler: (p) => void heard.push(p as JsonValue) } } });
  td.add(() => listener.close());
  const tracker = createRedisTracker({ redis: redisUrl(), keyPrefix: ns.namespace, heartbeatMs: 200, leaseMs: 3000 });
  const view = new InflightView({ redis: redisUrl(), keyPrefix: ns.namespace });
  td.add(() => view.close());
  const jobs = await startService({ ...common, name: ns.service('jobs'), instanceId: 'worker-1', prefetch: 4, tracker, methods: jobsMethods({ store: new MemoryEventLog(), prefix: 'repl', stepMs: 200, status: (id) => view.status(id) }) });
  td.add(() => jobs.close());
  client = await connectClient({ urls: amqpUrl(), namespace: ns.namespace, defaultTimeoutMs: 30_000 });
  td.add(() => client.close());
  const temp = tempDir();
  td.add(() => temp.remove());
  historyFile = path.join(temp.dir, 'repl_history');
}, 30_000);
afterAll(() => td.run());

function open(): ReplDriver {
  // --gateway off: a broker someone runs on this machine must not answer for our namespace.
  const repl = driveRepl({ amqpUrl: amqpUrl(), redisUrl: redisUrl(), namespace: ns.namespace, gateway: 'off' }, {}, historyFile);
  td.add(() => repl.end().then(() => undefined));
  return repl;
}

it('completes from the announcements, calls, notifies and shows errors over RabbitMQ', async () => {
  const repl = open();
  await repl.type('', /\d+ methods, 1 notifications \(from announcements\)/);
  repl.mark();
  await repl.type('call subt\t', 'call subtract');
  await repl.type(' \t\t', 'subtrahend=');
  expect(repl.since()).toContain('minuend=');
  await repl.type('\u0015subtract minuend=42 subtrahend=23\r', '\n19\n');
  repl.mark();
  await repl.type('call get_data\r', '"hello"');
  repl.mark();
  await repl.type('call add 1\r', 'error -32602: Invalid params');
  repl.mark();
  await repl.type('notify notify_h\t', 'notify notify_hello');
  await repl.type(' 7\r', 'sent notify_hello');
  await waitFor(() => heard.some((p) => JSON.stringify(p) === '[7]'), { message: 'the listener heard notify_hello' });
  repl.mark();
  await repl.type('dlq ls\r', 'dead-letter commands are served by the broker');
  // At a terminal, errors were shown as they came: leaving is a success.
  await expect(repl.end()).resolves.toBe(0);
}, 40_000);

it('lists a running job in inflight, shows its status, and cancels it', async () => {
  const callId = client.nextCallId();
  const job = client.call('report.render', { size: 100 }, { id: callId, timeoutMs: 60_000 }).catch((e: unknown) => e);
  const repl = open();
  await repl.type('', 'from announcements');
  await waitFor(async () => {
    repl.mark();
    return (await repl.type('inflight\r', /no calls in flight|report\.render/)).includes(callId);
  }, { timeoutMs: 15_000, intervalMs: 100, message: 'the job in flight' });
  repl.mark();
  await repl.type(`status ${callId}\r`, /method\s+report\.render/);
  repl.mark();
  await repl.type(`cancel ${callId}\r`, `cancelled ${callId}: its worker worker-1 was told to stop`);
  expect(await job).toBeInstanceOf(CancelledError);
  await expect(repl.end()).resolves.toBe(0);
}, 40_000);
