// Delayed calls through the gateway: X-Delay-Ms / X-Not-Before on POST /rpc, delayed.list and
// delayed.cancel over the in-flight store (Redis), and a cancelled delayed call that never runs,
// on a tracked worker (the cancel mark) and on an untracked one (the wire cancel).
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

const runs: { tag: string; at: number }[] = [];
let url: string;

type Listed = { calls: { callId: string; service: string; method: string; dueAt: string; createdAt: string; principal?: string }[] };

beforeAll(async () => {
  td.add(() => ns.destroy());
  td.add(() => deleteRedisKeys(`${ns.namespace}:`));
  const view = new InflightView({ redis: redisUrl(), keyPrefix: ns.namespace });
  td.add(() => view.close());
  const wiring = inflightWiring(view);
  const broker = await startBroker({ urls: amqpUrl(), namespace: ns.namespace, serviceName: ns.service('warren-broker'), port: 0, defaultMetrics: false, maxTimeoutMs: 60_000, ...wiring.options });
  td.add(() => broker.close());
  wiring.attach(broker, broker.gateway.options.logger);
  url = await broker.listen();
  const record = (p: unknown): string => {
    const tag = (p as { tag: string }).tag;
    runs.push({ tag, at: Date.now() });
    return tag;
  };
  const tracker = createRedisTracker({ redis: redisUrl(), keyPrefix: ns.namespace });
  const tracked = await startService({ urls: amqpUrl(), namespace: ns.namespace, name: ns.service('tracked'), tracker, methods: { 'tracked.run': { handler: record } } });
  td.add(() => tracked.close());
  const untracked = await startService({ urls: amqpUrl(), namespace: ns.namespace, name: ns.service('plain'), methods: { 'plain.run': { handler: record } } });
  td.add(() => untracked.close());
  await waitFor(() => ['tracked.run', 'plain.run'].every((m) => broker.gateway.catalogue.current().methods.has(m)), { message: 'methods known' });
});

const rpc = (body: object, headers: Record<string, string> = {}): Promise<Response> => postRpc(url, JSON.stringify({ jsonrpc: '2.0', ...body }), headers);
const listed = async (): Promise<Listed['calls']> => ((await (await rpc({ method: 'delayed.list', params: {}, id: 'l' })).json()) as { result: Listed }).result.calls;

it('runs a call delayed with X-Delay-Ms when due, not before, and answers it', async () => {
  const sent = Date.now();
  const res = await rpc({ method: 'plain.run', params: { tag: 'http' }, id: 1 }, { 'x-delay-ms': '1200', 'x-timeout-ms': '3000' });
  expect(await res.json()).toEqual({ jsonrpc: '2.0', result: 'http', id: 1 });
  expect((runs.find((r) => r.tag === 'http')?.at ?? 0) - sent).toBeGreaterThanOrEqual(1200);
});

it('refuses a malformed delay header with 400 invalid_delay_header, sending nothing', async () => {
  for (const headers of [{ 'x-delay-ms': 'soon' }, { 'x-delay-ms': '-1' }, { 'x-not-before': '2030-01-01 02:00' }, { 'x-delay-ms': '5', 'x-not-before': '1' }, { 'x-delay-ms': '4294967296' }]) {
    const res = await rpc({ method: 'plain.run', params: { tag: 'never' }, id: 2 }, headers);
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { code: number; data: { reason: string } } }).error).toMatchObject({ code: ErrorCode.InvalidRequest, data: { reason: 'invalid_delay_header' } });
  }
});

it.each([['tracked.run', 'a tracked worker (the cancel mark)'], ['plain.run', 'an untracked worker (the wire cancel)']])('lists a delayed %s, and once cancelled it never runs on %s', async (method, _how) => {
  const tag = `cancel-${method}`;
  const notBefore = new Date(Date.now() + 2500).toISOString();
  // The caller waits for the answer: -32003 once the cancelled call is due and its worker answers without running it.
  const answer = rpc({ method, params: { tag }, id: 3 }, { 'x-not-before': notBefore, 'x-timeout-ms': '2000' }).then(async (r) => (await r.json()) as { error?: { code: number } });
  await waitFor(async () => (await listed()).some((c) => c.method === method), { message: 'listed' });
  const entry = (await listed()).find((c) => c.method === method);
  expect(entry).toMatchObject({ service: method.split('.')[0] === 'tracked' ? 'tracked' : 'plain', method });
  expect(Date.parse(entry?.dueAt ?? '')).toBe(Date.parse(notBefore));
  const cancelled = (await (await rpc({ method: 'delayed.cancel', params: { callId: entry?.callId }, id: 4 })).json()) as { result: { callId: string; listed: boolean } };
  expect(cancelled.result).toMatchObject({ callId: entry?.callId, listed: true });
  expect((await listed()).some((c) => c.callId === entry?.callId)).toBe(false);
  expect((await answer).error?.code).toBe(ErrorCode.Cancelled);
  expect(runs.some((r) => r.tag === tag)).toBe(false);
});
