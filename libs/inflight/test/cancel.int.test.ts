// Cancellation across workers: a running call's handler sees its AbortSignal
// fire, a queued call never starts, and both callers get CancelledError
// (-32003), whether an operator cancels by id or the caller aborts.
import { connectClient, startService, type RpcClient, type WarrenService } from '@warren/amqp';
import { ErrorCode, JsonRpcError } from '@warren/jsonrpc';
import { Teardown, amqpUrl, redisUrl, waitFor } from '@warren/testkit';
import { TestNamespace } from '../../../test/support/amqp';
import { InflightView, cancelOnAbort, createRedisTracker, type RedisCallTracker } from '../src';
import { testKeys, workMethods } from './fixtures/methods';
import { TestPrefix, startCall } from './support';

const td = new Teardown();
const ns = new TestNamespace();
const tp = new TestPrefix();
let client: RpcClient;
let view: InflightView;
let tracker: RedisCallTracker;
let service: WarrenService;

beforeAll(async () => {
  td.add(() => ns.destroy());
  td.add(() => tp.destroy());
  view = new InflightView({ redis: redisUrl(), keyPrefix: tp.prefix });
  td.add(() => view.close());
  tracker = createRedisTracker({ redis: redisUrl(), keyPrefix: tp.prefix, leaseMs: 3000, heartbeatMs: 500 });
  // prefetch 1: a second call waits in the queue behind the first.
  service = await startService({ urls: amqpUrl(), namespace: ns.namespace, name: ns.service('cancel'), prefetch: 1, methods: workMethods(tp.redis, tp.prefix), tracker });
  td.add(() => service.close());
  client = await connectClient({ urls: amqpUrl(), namespace: ns.namespace, defaultTimeoutMs: 20_000 });
  td.add(() => client.close());
});
afterAll(() => td.run());

async function codeOf(answer: Promise<unknown>): Promise<number | string> {
  return answer.then(() => 'resolved', (err: unknown) => (err instanceof JsonRpcError ? err.code : String(err)));
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

  queuedAbort.abort();
  expect(await codeOf(queued.answer)).toBe(ErrorCode.Cancelled); // settled by the client at once
  await waitFor(async () => (await view.status(queued.callId)).state === 'cancelled', { message: 'queued call marked cancelled' });
  runningAbort.abort();
  expect(await codeOf(running.answer)).toBe(ErrorCode.Cancelled);

  const r = testKeys(tp.prefix, running.callId);
  await waitFor(async () => (await count(r.aborts)) === 1, { message: 'running handler saw its signal' });
  // The queued call is dequeued once the first is aborted, and answered from its cancel mark.
  await waitFor(() => tracker.health().answeredFromStore === answeredBefore + 1, { message: 'queued call skipped' });
  expect(await count(testKeys(tp.prefix, queued.callId).starts)).toBe(0);
  expect(await count(r.effects)).toBe(0);
  expect((await view.status(running.callId)).state).toBe('cancelled');
}, 30_000);
