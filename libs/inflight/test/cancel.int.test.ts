// Cancellation across workers: a running call's handler sees its AbortSignal
// fire, a queued call never starts, and both callers get CancelledError
// (-32003), whether an operator cancels by id or the caller aborts.
import { startService, type RpcClient, type WarrenService } from '@warren/amqp';
import { ErrorCode, wireErrorOf } from '@warren/jsonrpc';
import { FaultProxy, amqpUrl, redisUrl, waitFor } from '@warren/testkit';
import type { StoreCallTracker } from '../src/call-tracker';
import { cancelOnAbort } from '../src/client';
import { createRedisTracker } from '../src/redis-tracker';
import type { InflightView } from '../src/view';
import { keys } from '../src/keys';
import { testKeys, workMethods } from './fixtures/methods';
import { TestBed, startCall } from './support';

const bed = new TestBed();
const { td, ns, tp } = bed;
let client: RpcClient;
let view: InflightView;
let tracker: StoreCallTracker;
let service: WarrenService;

beforeAll(async () => {
  ({ client, view } = await bed.start());
  // prefetch 1: a second call waits in the queue behind the first.
  ({ service, tracker } = await bed.trackedService('cancel', { prefetch: 1 }));
});
afterAll(() => bed.close());

async function codeOf(answer: Promise<unknown>): Promise<number | string> {
  // The wire code: a worker's answer as it is, a failure on the caller's side (its abort, its deadline) by its wire form.
  return answer.then(() => 'resolved', (err: unknown) => wireErrorOf(err)?.code ?? String(err));
}

const count = async (key: string): Promise<number> => Number((await tp.redis.get(key)) ?? 0);

it('an operator cancels a running call and a queued one by id', async () => {
  const running = startCall(client, 'work', { ms: 60_000, value: 1 });
  await waitFor(async () => (await view.status(running.callId)).state === 'running', { message: 'first call running' });
  const queued = startCall(client, 'work', { ms: 10, value: 2 });
  expect((await view.status(queued.callId)).state).toBe('unknown'); // still in RabbitMQ, no worker took it

  expect(await view.cancel(queued.callId)).toEqual({ outcome: 'marked' });
  expect(await view.cancel(running.callId)).toEqual({ outcome: 'signalled', worker: service.instanceId });

  expect(await codeOf(running.answer)).toBe(ErrorCode.Cancelled);
  expect(await codeOf(queued.answer)).toBe(ErrorCode.Cancelled);
  const r = testKeys(tp.prefix, running.callId);
  expect(await count(r.aborts)).toBe(1); // the handler saw its signal
  expect(await count(r.effects)).toBe(0);
  expect(await count(testKeys(tp.prefix, queued.callId).starts)).toBe(0); // never started
  expect(await view.status(running.callId)).toMatchObject({ state: 'cancelled', cancelRequested: true, response: { error: { code: ErrorCode.Cancelled } } });
  expect(await view.status(queued.callId)).toMatchObject({ state: 'cancelled', response: { error: { code: ErrorCode.Cancelled } } });
  expect(await view.cancel(running.callId)).toEqual({ outcome: 'already-cancelled' });
}, 30_000);

it("a caller's abort cancels the call where it runs, and the queued one before it starts", async () => {
  cancelOnAbort(client, view);
  const runningAbort = new AbortController();
  const queuedAbort = new AbortController();
  const running = startCall(client, 'work', { ms: 60_000, value: 3 }, { signal: runningAbort.signal });
  await waitFor(async () => (await view.status(running.callId)).state === 'running', { message: 'first call running' });
  const queued = startCall(client, 'work', { ms: 10, value: 4 }, { signal: queuedAbort.signal });
  const answeredBefore = tracker.health().answeredFromStore;
  const serviceAnsweredBefore = service.stats().answered;

  queuedAbort.abort();
  expect(await codeOf(queued.answer)).toBe(ErrorCode.Cancelled); // settled by the client at once
  await waitFor(async () => (await view.status(queued.callId)).state === 'cancelled', { message: 'queued call marked cancelled' });
  runningAbort.abort();
  expect(await codeOf(running.answer)).toBe(ErrorCode.Cancelled);

  const r = testKeys(tp.prefix, running.callId);
  await waitFor(async () => (await count(r.aborts)) === 1, { message: 'running handler saw its signal' });
  // The queued call is dequeued once the first is aborted, and answered without running: from its cancel mark in
  // Redis, or (usually first) from the cancel the worker heard on the wire (NS.cancel) while it waited in the queue.
  await waitFor(() => tracker.health().answeredFromStore === answeredBefore + 1 || service.stats().answered > serviceAnsweredBefore + 1, { message: 'queued call skipped' });
  expect(await count(testKeys(tp.prefix, queued.callId).starts)).toBe(0);
  expect(await count(r.effects)).toBe(0);
  expect((await view.status(running.callId)).state).toBe('cancelled');
}, 30_000);

/** Cancels by id a call not sent yet, sends it, and expects -32003 with its handler never started. */
async function expectMarkedCallNeverStarts(method: string, sendAfterMark: () => Promise<void>): Promise<void> {
  const callId = client.nextCallId();
  expect(await view.cancel(callId)).toEqual({ outcome: 'marked' });
  await sendAfterMark();
  const call = startCall(client, method, { ms: 2000, value: 5 });
  expect(call.callId).toBe(callId);
  expect(await codeOf(call.answer)).toBe(ErrorCode.Cancelled);
  expect(await count(testKeys(tp.prefix, callId).starts)).toBe(0);
  expect((await view.status(callId)).state).toBe('cancelled');
}

it('a call cancelled by id before its worker started never starts: the worker reads the live marks back when it subscribes', async () => {
  await expectMarkedCallNeverStarts('early', async () => {
    await bed.trackedService('marked-early', { prefetch: 4, methods: workMethods(tp.redis, tp.prefix, undefined, 'early') });
  });
}, 30_000);

it("a call cancelled by id while its worker's Redis was away never starts once the worker is back", async () => {
  const proxy = await FaultProxy.forUrl(redisUrl());
  td.add(() => proxy.close());
  const away = createRedisTracker({ redis: proxy.url(redisUrl()), keyPrefix: tp.prefix, commandTimeoutMs: 300, leaseMs: 3000, heartbeatMs: 100 });
  const s = await startService({ urls: amqpUrl(), namespace: ns.namespace, name: ns.service('marked-away'), prefetch: 4, methods: workMethods(tp.redis, tp.prefix, undefined, 'away'), tracker: away });
  td.add(() => s.close());
  const ownChannel = keys(tp.prefix).cancelChannel(s.instanceId);
  const subscribed = async (): Promise<boolean> => (await tp.redis.pubsub('NUMSUB', ownChannel))[1] === 1;
  await waitFor(subscribed, { message: 'worker subscribed' });

  proxy.refuse(true);
  proxy.cutAll();
  await waitFor(async () => away.state === 'degraded' && !(await subscribed()), { message: 'worker cut off from Redis' });
  await expectMarkedCallNeverStarts('away', async () => {
    proxy.refuse(false);
    // Back, and subscribed again (the mark was published while it was not): the call is sent only now.
    await waitFor(async () => away.state === 'tracking' && (await subscribed()), { timeoutMs: 15_000, message: 'worker back on Redis' });
  });
}, 40_000);
