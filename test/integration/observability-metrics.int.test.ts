// Issue 31's metrics, on the real RabbitMQ: a worker run by runServiceMain with
// an ops port serves /metrics (per-method outcomes, error codes, handler and
// queue-wait histograms, in-flight, tracking state), and the broker's /metrics
// gains per-service queue depth, consumers, dead letters, refusals by reason
// and instances by service. Calls include one retried and then dead-lettered
// (a retry policy whose every attempt fails), so those series move too.
// The broker's scheduler (schedules in memory) fires a schedule of a method
// nobody serves, so its failures are counted. Last, every series
// deploy/observability's alert rules and dashboard name is in a scrape of this running system.
import { EventEmitter } from 'node:events';
import amqp from 'amqplib';
import { RetryableError, runServiceMain, startService } from '@warren/amqp';
import type { MainProcess } from '../../libs/amqp/src/runtime/service-main';
import { createRedisTracker } from '@warren/inflight';
import { InvalidParamsError } from '@warren/jsonrpc';
import { silentLogger } from '@warren/logger';
import { Teardown, amqpUrl, freePort, redisUrl, uniqueName, waitFor } from '@warren/testkit';
import { startBroker } from '../../broker/src';
import { schedulesWiring } from '../../broker/src/schedules-wiring';
import { MemoryScheduleStore, parseSchedule } from '@warren/schedules';
import { TestNamespace } from '../support/amqp';
import { promSum, scrape, type PromSample } from '../support/prom-text';
import { namedSeries } from '../support/observability-files';
import { deleteRedisKeys } from './helpers';

const td = new Teardown();
const ns = new TestNamespace();
const service = ns.service('metered');
const prefix = uniqueName('metrics');
const retryMs = 100;
let brokerUrl: string;
let workerUrl: string;

/** A stand-in for `process`: the test sends the SIGTERM. */
function fakeProcess(): MainProcess & { readonly emitter: EventEmitter } {
  const emitter = new EventEmitter();
  return { emitter, on: (s, l) => emitter.on(s, l), off: (s, l) => emitter.off(s, l), stderr: { write: () => true } };
}

beforeAll(async () => {
  td.add(() => ns.destroy());
  td.add(() => deleteRedisKeys(`${prefix}:`));
  td.add(async () => {
    const model = await amqp.connect(amqpUrl());
    const ch = await model.createChannel();
    await ch.deleteQueue(ns.names.retryQueue(service, retryMs));
    await model.close();
  });
  // Schedules in memory, ticking fast: one calls a method nobody serves, so warren_schedule_failed_total moves.
  const scheduleStore = new MemoryScheduleStore();
  const schedules = schedulesWiring(scheduleStore, { scheduler: { tickMs: 100, leaseMs: 1000 } });
  const broker = await startBroker({ urls: amqpUrl(), namespace: ns.namespace, serviceName: ns.service('warren-broker'), port: 0, defaultMetrics: false, ...schedules.options });
  td.add(() => broker.close());
  schedules.attach(broker, silentLogger());
  td.add(() => schedules.close());
  const failing = parseSchedule({ name: 'failing', method: 'nobody.serves', everyMs: 1000 }, Date.now(), 'runtime');
  if (failing.ok) await scheduleStore.put(failing.schedule, false);
  brokerUrl = await broker.listen();
  const port = await freePort();
  workerUrl = `http://127.0.0.1:${port}`;
  const proc = fakeProcess();
  const exit = runServiceMain({
    name: service, logger: silentLogger(), process: proc, ops: { port, host: '127.0.0.1' },
    start: async (log, { observer }) => {
      const tracker = createRedisTracker({ redis: redisUrl(), keyPrefix: prefix, logger: log });
      const worker = await startService({
        urls: amqpUrl(), namespace: ns.namespace, name: service, logger: log, tracker, ...(observer === undefined ? {} : { observer }),
        methods: {
          add: { handler: (params) => (params as [number, number])[0] + (params as [number, number])[1] },
          refuse: { handler: () => { throw new InvalidParamsError('no'); } },
          // Every attempt fails: attempt 1 is retried, attempt 2 is answered and dead-lettered (retries_exhausted).
          doomed: { retry: { attempts: 2, backoffMs: retryMs }, handler: () => { throw new RetryableError('never'); } },
        },
      });
      return { ready: () => worker.ready, metrics: { running: () => worker.stats().running, tracking: () => tracker.report?.() }, close: () => worker.close() };
    },
  });
  td.add(async () => {
    proc.emitter.emit('SIGTERM', 'SIGTERM');
    await exit;
  });
  await waitFor(async () => (await fetch(`${workerUrl}/readyz`).then((r) => r.status, () => 0)) === 200, { timeoutMs: 20_000 });
  // The broker knows the service once it heard its announcement.
  await waitFor(async () => ((await (await fetch(`${brokerUrl}/services`)).json()) as { services: { name: string }[] }).services.some((s) => s.name === service), { timeoutMs: 20_000 });
}, 60_000);
afterAll(() => td.run(), 30_000);

const rpc = async (method: string, params: unknown): Promise<{ result?: unknown; error?: { code: number } }> => {
  const res = await fetch(`${brokerUrl}/rpc`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', method, params, id: 1 }) });
  return (await res.json()) as { result?: unknown; error?: { code: number } };
};

const worker = (): Promise<PromSample[]> => scrape(`${workerUrl}/metrics`);
const broker = (): Promise<PromSample[]> => scrape(`${brokerUrl}/metrics`);

it("a worker's /metrics counts outcomes, error codes, handler time and queue wait per method, and shows in-flight and tracking state", async () => {
  const before = await worker();
  expect(promSum(before, 'warren_worker_requests_total', { method: 'add', outcome: 'ok' }) ?? 0).toBe(0);
  expect(promSum(before, 'warren_worker_requests_in_flight')).toBe(0);

  expect((await rpc('add', [2, 3])).result).toBe(5);
  expect((await rpc('refuse', [])).error?.code).toBe(-32602);
  expect((await rpc('doomed', [])).error).toBeDefined();

  const after = await worker();
  expect(promSum(after, 'warren_worker_requests_total', { service, method: 'add', outcome: 'ok' })).toBe(1);
  expect(promSum(after, 'warren_worker_requests_total', { method: 'refuse', outcome: 'error' })).toBe(1);
  expect(promSum(after, 'warren_worker_errors_total', { method: 'refuse', code: 'invalid_params' })).toBe(1);
  expect(promSum(after, 'warren_worker_requests_total', { method: 'doomed', outcome: 'retried' })).toBe(1);
  expect(promSum(after, 'warren_worker_requests_total', { method: 'doomed', outcome: 'dead_lettered' })).toBe(1);
  expect(promSum(after, 'warren_worker_handler_duration_seconds_count', { method: 'add' })).toBe(1);
  expect(promSum(after, 'warren_worker_queue_wait_seconds_count', { method: 'add' })).toBe(1);
  // Two deliveries of `doomed`: both waited in a queue (the second, in the delay queue too).
  expect(promSum(after, 'warren_worker_queue_wait_seconds_count', { method: 'doomed' })).toBe(2);
  expect(promSum(after, 'warren_worker_requests_in_flight')).toBe(0);
  expect(promSum(after, 'warren_worker_tracking_state', { state: 'tracking' })).toBe(1);
  expect(promSum(after, 'warren_worker_tracking_state', { state: 'degraded' })).toBe(0);
}, 30_000);

it("the broker's /metrics shows queue depth, consumers and dead letters per service, refusals by reason and instances by service", async () => {
  // The first test's `doomed` call lies in the dead-letter queue (or the test ran alone: make one here).
  if ((promSum(await broker(), 'warren_service_dead_letter_messages', { service }) ?? 0) === 0) await rpc('doomed', []);
  await waitFor(async () => (promSum(await broker(), 'warren_service_dead_letter_messages', { service }) ?? 0) >= 1, { timeoutMs: 10_000 });
  const samples = await broker();
  expect(promSum(samples, 'warren_service_queue_consumers', { service })).toBe(1);
  expect(promSum(samples, 'warren_service_queue_messages', { service })).toBe(0);
  expect(promSum(samples, 'warren_registry_instances', { service })).toBe(1);

  const refusedBefore = promSum(samples, 'warren_gateway_refused_total', { reason: 'invalid_timeout_header' }) ?? 0;
  const res = await fetch(`${brokerUrl}/rpc`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-timeout-ms': 'soon' }, body: '{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}' });
  expect(res.status).toBe(400);
  await res.arrayBuffer();
  expect(promSum(await broker(), 'warren_gateway_refused_total', { reason: 'invalid_timeout_header' })).toBe(refusedBefore + 1);
}, 30_000);

it("the broker's /metrics counts a schedule's failed runs by schedule and method", async () => {
  await waitFor(async () => (promSum(await broker(), 'warren_schedule_failed_total', { schedule: 'failing', method: 'nobody.serves' }) ?? 0) >= 1, { timeoutMs: 10_000, message: 'a failed scheduled run counted' });
  expect(promSum(await broker(), 'warren_schedule_fired_total', { schedule: 'failing' })).toBeGreaterThanOrEqual(1);
}, 30_000);

it("every series deploy/observability's alert rules and Grafana dashboard name exists in a scrape of the worker or the broker", async () => {
  // Counters show once counted: make each kind of event happen (not relying on the tests above).
  await rpc('add', [1, 1]);
  await rpc('refuse', []);
  await (await fetch(`${brokerUrl}/rpc`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-timeout-ms': 'x' }, body: '{}' })).arrayBuffer();
  await waitFor(async () => promSum(await broker(), 'warren_schedule_failed_total') !== undefined, { timeoutMs: 10_000, message: 'a scheduled run counted' });
  const scraped = new Set([...(await worker()), ...(await broker())].map((s) => s.name));
  const missing = [...namedSeries()].filter(([series]) => !scraped.has(series)).map(([series, where]) => `${series} (${where})`);
  expect(missing).toEqual([]);
  expect(namedSeries().size).toBeGreaterThan(10);
}, 30_000);
