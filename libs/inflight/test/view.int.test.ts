// The cluster-wide view during and after a run of slow calls on two workers:
// the in-flight list, status by id, live workers and their load, the view as
// JSON-RPC methods, and a caller recovering a lost reply by call id.
import { connectClient, startService, type RpcClient } from '@warren/amqp';
import { ErrorCode, InvalidParamsError } from '@warren/jsonrpc';
import { FaultProxy, amqpUrl, waitFor } from '@warren/testkit';
import { callWithRecovery } from '../src/client';
import { inflightMethods } from '../src/methods';
import type { CallStatus } from '../src/record-codec';
import type { InflightView } from '../src/view';
import { workMethods, type WorkResult } from './fixtures/methods';
import { TestBed, startCall } from './support';

const bed = new TestBed();
const { td, ns, tp } = bed;
const service = ns.service('slow');
let client: RpcClient;
let view: InflightView;

beforeAll(async () => {
  ({ client, view } = await bed.start());
  const methods = {
    ...workMethods(tp.redis, tp.prefix),
    boom: { handler: () => { throw new InvalidParamsError(undefined, { reason: 'always' }); } },
  };
  for (const instanceId of ['w-a', 'w-b']) await bed.trackedService(service, { prefetch: 3, instanceId, methods, tracker: { heartbeatMs: 100 } });
  const ops = await startService({ urls: amqpUrl(), namespace: ns.namespace, name: ns.service('ops'), methods: inflightMethods(view) });
  td.add(() => ops.close());
});
afterAll(() => bed.close());

it('lists the running calls and their workers while they run, and their outcomes after', async () => {
  const started = Date.now();
  const calls = Array.from({ length: 6 }, (_, i) => startCall<WorkResult>(client, 'work', { ms: 1500, value: i }, { timeoutMs: 10_000 }));
  const ids = calls.map((c) => c.callId).sort();

  await waitFor(async () => (await view.list({ service })).length === 6, { message: 'six calls listed' });
  const listed = await view.list({ service });
  expect(listed.map((c) => c.callId).sort()).toEqual(ids);
  for (const c of listed) {
    expect(c).toMatchObject({ service, method: 'work', attempt: 1, cancelRequested: false });
    expect(['w-a', 'w-b']).toContain(c.worker);
    expect(c.ageMs).toBeGreaterThanOrEqual(0);
    expect(c.deadline).toBeGreaterThanOrEqual(started + 10_000);
    expect(c.leaseUntil).toBeGreaterThan(c.startedAt);
  }
  const during = await Promise.all(ids.map((id) => view.status(id)));
  expect(during.map((s) => s.state)).toEqual(Array(6).fill('running'));

  const workers = await view.workers({ service });
  expect(workers.map((w) => w.instanceId)).toEqual(['w-a', 'w-b']);
  await waitFor(async () => (await view.workers({ service })).reduce((n, w) => n + w.inflight, 0) === 6, { message: 'heartbeats count six in flight' });

  const results = await Promise.all(calls.map((c) => c.answer));
  expect(results.map((r) => r.value).sort((a, b) => a - b)).toEqual([0, 2, 4, 6, 8, 10]);
  expect(await view.list({ service })).toEqual([]);
  const after: CallStatus[] = await Promise.all(ids.map((id) => view.status(id)));
  for (const s of after) {
    expect(s.state).toBe('done');
    expect(s.response && 'result' in s.response).toBe(true);
    expect(s.finishedAt).toBeGreaterThanOrEqual(s.startedAt ?? 0);
  }
  await waitFor(async () => (await view.workers({ service })).every((w) => w.inflight === 0), { message: 'heartbeats count none in flight' });
}, 30_000);

it('shows failed calls with their error, and unknown ids as unknown', async () => {
  const failing = startCall(client, 'boom', []);
  await expect(failing.answer).rejects.toMatchObject({ code: ErrorCode.InvalidParams });
  expect(await view.status(failing.callId)).toMatchObject({ state: 'failed', response: { error: { code: ErrorCode.InvalidParams } } });
  expect(await view.status('no-such-call')).toEqual({ callId: 'no-such-call', state: 'unknown', cancelRequested: false });
  expect(await view.result('no-such-call')).toBeUndefined();
});

it('serves the view as JSON-RPC methods', async () => {
  const done = startCall(client, 'work', { ms: 1, value: 20 });
  await done.answer;
  await expect(client.call('inflight.status', { callId: done.callId })).resolves.toMatchObject({ state: 'done', response: { result: { value: 40 } } });
  await expect(client.call('inflight.workers', { service })).resolves.toHaveLength(2);
  await expect(client.call('inflight.status', {})).rejects.toMatchObject({ code: ErrorCode.InvalidParams });
});

it('recovers the result of a call whose reply was lost, by call id', async () => {
  const proxy = await FaultProxy.forUrl(amqpUrl());
  td.add(() => proxy.close());
  // Direct reply-to: the reply path dies with the connection, and the client says so (RpcConnectionLostError, -32007 on the wire).
  const fragile = await connectClient({ urls: proxy.url(amqpUrl()), namespace: ns.namespace, replyMode: 'direct', defaultTimeoutMs: 10_000 });
  td.add(() => fragile.close());
  const callId = fragile.nextCallId();
  let recoveries = 0;
  const recovering: Pick<InflightView, 'waitForResult'> = {
    waitForResult: (id, opts) => {
      recoveries++;
      return view.waitForResult(id, opts);
    },
  };
  const answer = callWithRecovery<WorkResult>(fragile, recovering, 'work', { ms: 300, value: 50 });
  await waitFor(async () => (await view.status(callId)).state === 'running', { message: 'call running' });
  proxy.cutAll();
  await expect(answer).resolves.toMatchObject({ value: 100 });
  expect(recoveries).toBe(1); // the reply was lost, and the result came from the store
}, 20_000);
