// Redis goes away during a load of calls (a fault proxy in front of the shared
// Redis cuts and refuses connections; the real server is left alone): no call
// fails because of it, the tracker says it is degraded, and tracking resumes
// when Redis is reachable again. With requireTracking, calls fail instead.
import { startService, type RpcClient } from '@warren/amqp';
import { ErrorCode, JsonRpcError } from '@warren/jsonrpc';
import { FaultProxy, amqpUrl, redisUrl, waitFor } from '@warren/testkit';
import { createRedisTracker } from '../src/redis-tracker';
import { InflightView } from '../src/view';
import { workMethods } from './fixtures/methods';
import { TestBed, startCall } from './support';

const bed = new TestBed();
const { td, ns, tp } = bed;
let client: RpcClient;
let view: InflightView;
let proxy: FaultProxy;

beforeAll(async () => {
  // The view goes to Redis directly: it checks what the workers wrote.
  ({ client, view } = await bed.start());
  proxy = await FaultProxy.forUrl(redisUrl());
  td.add(() => proxy.close());
});
afterAll(() => bed.close());

function redisDown(): void {
  proxy.refuse(true);
  proxy.cutAll();
}

it('keeps every call flowing while Redis is away, and tracks again once it is back', async () => {
  const tracker = createRedisTracker({ redis: proxy.url(redisUrl()), keyPrefix: tp.prefix, commandTimeoutMs: 300, leaseMs: 1500, heartbeatMs: 100 });
  const service = await startService({ urls: amqpUrl(), namespace: ns.namespace, name: ns.service('outage'), prefetch: 16, methods: workMethods(tp.redis, tp.prefix, undefined, 'load'), tracker });
  td.add(() => service.close());
  expect(tracker.state).toBe('tracking');

  const total = 600;
  let done = 0;
  const failures: unknown[] = [];
  let next = 0;
  const loop = async (): Promise<void> => {
    while (next < total) {
      next++;
      await startCall(client, 'load', { ms: 2, value: next }).answer.then(
        () => done++,
        (err: unknown) => failures.push(err),
      );
    }
  };
  const load = Promise.all(Array.from({ length: 16 }, loop));

  await waitFor(() => done >= 100, { timeoutMs: 15_000, message: '100 calls done' });
  redisDown();
  await waitFor(() => tracker.state === 'degraded', { message: 'tracker degraded' });
  const untrackedAtCut = tracker.health().untracked;
  const doneAtCut = done;
  await waitFor(() => done >= doneAtCut + 150, { timeoutMs: 15_000, message: '150 calls done while Redis is away' });
  proxy.refuse(false);
  await waitFor(() => tracker.state === 'tracking', { timeoutMs: 10_000, message: 'tracking resumed' });
  await load;

  expect(failures).toEqual([]);
  expect(done).toBe(total);
  const health = tracker.health();
  expect(health.degradedTransitions).toBe(1);
  expect(health.untracked - untrackedAtCut).toBeGreaterThanOrEqual(100);

  // Tracked again: new calls leave their outcome in Redis.
  const after = startCall<{ value: number }>(client, 'load', { ms: 2, value: 7 });
  await expect(after.answer).resolves.toMatchObject({ value: 14 });
  expect(await view.status(after.callId)).toMatchObject({ state: 'done', response: { result: { value: 14 } } });
}, 60_000);

it('with requireTracking, calls fail with ServiceUnavailable (unrun) while Redis is away, and run again after', async () => {
  const tracker = createRedisTracker({ redis: proxy.url(redisUrl()), keyPrefix: tp.prefix, commandTimeoutMs: 300, leaseMs: 1500, heartbeatMs: 100, requireTracking: true });
  const service = await startService({ urls: amqpUrl(), namespace: ns.namespace, name: ns.service('outage-strict'), methods: workMethods(tp.redis, tp.prefix, undefined, 'strict'), tracker });
  td.add(() => service.close());
  await expect(startCall(client, 'strict', { ms: 1, value: 1 }).answer).resolves.toMatchObject({ value: 2 });

  redisDown();
  await waitFor(() => tracker.state === 'degraded', { message: 'tracker degraded' });
  const refused = startCall(client, 'strict', { ms: 1, value: 2 });
  const error = await refused.answer.then(() => undefined, (err: unknown) => err);
  expect(error).toBeInstanceOf(JsonRpcError);
  expect((error as JsonRpcError).code).toBe(ErrorCode.ServiceUnavailable);
  expect(await tp.redis.get(`${tp.prefix}:test:starts:{${refused.callId}}`)).toBeNull();

  proxy.refuse(false);
  await waitFor(() => tracker.state === 'tracking', { timeoutMs: 10_000, message: 'tracking resumed' });
  await expect(startCall(client, 'strict', { ms: 1, value: 3 }).answer).resolves.toMatchObject({ value: 6 });
}, 30_000);
