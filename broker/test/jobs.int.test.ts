// POST /jobs (docs/jobs.md, docs/gateway.md "Jobs"): a job enqueued through the gateway runs once and is
// answered 202 with its id; its id given again is a duplicate; a method nobody serves is 404 (-32601); a
// malformed body or header is 400; a delayed job waits; its state is read with inflight.status.
import { startService } from '@warren/amqp';
import { InflightView, createRedisTracker } from '@warren/inflight';
import { ErrorCode } from '@warren/jsonrpc';
import { Teardown, amqpUrl, redisUrl, waitFor } from '@warren/testkit';
import { deleteRedisKeys } from '../../test/integration/helpers';
import { TestNamespace } from '../../test/support/amqp';
import { inflightWiring, startBroker } from '../src';
import { postRpc } from './support';

const td = new Teardown();
const ns = new TestNamespace().withDelayChain();
afterAll(() => td.run());

const runs: { size: number; at: number }[] = [];
let url: string;

beforeAll(async () => {
  td.add(() => ns.destroy());
  td.add(() => deleteRedisKeys(`${ns.namespace}:`));
  const view = new InflightView({ redis: redisUrl(), keyPrefix: ns.namespace });
  td.add(() => view.close());
  const wiring = inflightWiring(view);
  const broker = await startBroker({ urls: amqpUrl(), namespace: ns.namespace, serviceName: ns.service('warren-broker'), port: 0, defaultMetrics: false, ...wiring.options });
  td.add(() => broker.close());
  wiring.attach(broker, broker.gateway.options.logger);
  url = await broker.listen();
  const tracker = createRedisTracker({ redis: redisUrl(), keyPrefix: ns.namespace });
  const service = await startService({ urls: amqpUrl(), namespace: ns.namespace, name: ns.service('reports'), tracker, methods: { 'report.render': { handler: (p: unknown) => (runs.push({ size: (p as { size: number }).size, at: Date.now() }), 'rendered') } } });
  td.add(() => service.close());
});

const post = (body: string, headers: Record<string, string> = {}): Promise<Response> => fetch(`${url}/jobs`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
const status = async (id: string): Promise<{ state: string; response?: unknown }> => ((await (await postRpc(url, JSON.stringify({ jsonrpc: '2.0', method: 'inflight.status', params: { callId: id }, id: 1 }))).json()) as { result: { state: string; response?: unknown } }).result;

it('enqueues a job (202, its id), runs it once, tells its outcome by id; the same id again is a duplicate', async () => {
  const id = `gw-${ns.namespace}`;
  const res = await post(JSON.stringify({ method: 'report.render', params: { size: 4 }, id }));
  expect(res.status).toBe(202);
  expect(await res.json()).toMatchObject({ id, duplicate: false });
  await waitFor(async () => (await status(id)).state === 'done', { message: 'job done' });
  expect(await status(id)).toMatchObject({ state: 'done', response: { result: 'rendered', id } });
  const again = await post(JSON.stringify({ method: 'report.render', params: { size: 5 }, id }));
  expect(again.status).toBe(202);
  expect(await again.json()).toMatchObject({ id, duplicate: true, state: 'done' });
  expect(runs.filter((r) => r.size === 4 || r.size === 5)).toHaveLength(1);
});

it('delays a job with X-Delay-Ms', async () => {
  const sent = Date.now();
  const res = await post(JSON.stringify({ method: 'report.render', params: { size: 7 } }), { 'x-delay-ms': '1200' });
  expect(res.status).toBe(202);
  const { id, dueAt } = (await res.json()) as { id: string; dueAt: number };
  expect(dueAt).toBeGreaterThanOrEqual(sent + 1200);
  await waitFor(async () => (await status(id)).state === 'done', { message: 'delayed job done' });
  expect((runs.find((r) => r.size === 7)?.at ?? 0) - sent).toBeGreaterThanOrEqual(1200);
});

it('answers 404 -32601 for a method no queue is bound for, and 400 for a malformed body or header', async () => {
  const missing = await post(JSON.stringify({ method: 'nobody.serves', params: {} }));
  expect(missing.status).toBe(404);
  expect(((await missing.json()) as { error: { code: number } }).error.code).toBe(ErrorCode.MethodNotFound);
  for (const [body, headers] of [['{', {}], ['{"params":{}}', {}], ['{"method":"report.render","params":3}', {}], ['{"method":"report.render","id":7}', {}], ['{"method":"report.render","id":"-bad"}', {}], ['{"method":"report.render"}', { 'x-timeout-ms': '0' }], ['{"method":"report.render"}', { 'x-delay-ms': 'soon' }]] as const) {
    const res = await post(body, headers);
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { code: number } }).error.code).toBe(ErrorCode.InvalidRequest);
  }
});
