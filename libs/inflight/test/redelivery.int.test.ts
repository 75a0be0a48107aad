// A request redelivered after it finished (the worker's connection cut after
// the outcome was stored, before the ack went out): the handler does not run
// again, and the redelivery is answered from the store. The reply of the first
// run goes out before the store's write (same turn of the event loop), so the
// caller usually has its answer from that run, and the stored one is dropped
// as late; had the cut taken that reply, the stored one would answer.
import { startService, type CallTracker, type RpcClient } from '@warren/amqp';
import type { Abortable, Executed, RunInfo, RunningCall, TrackedOutcome } from '@warren/calls';
import { FaultProxy, amqpUrl, redisUrl, waitFor } from '@warren/testkit';
import type { StoreCallTracker } from '../src/call-tracker';
import { createRedisTracker } from '../src/redis-tracker';
import { InflightView } from '../src/view';
import { testKeys, workMethods, type WorkResult } from './fixtures/methods';
import { TestBed, startCall } from './support';

const bed = new TestBed();
const { td, ns, tp } = bed;
let client: RpcClient;
let view: InflightView;

beforeAll(async () => {
  ({ client, view } = await bed.start());
});
afterAll(() => bed.close());

/** Passes everything to the real tracker, and cuts the worker's AMQP connection right after the first outcome is stored, before the ack. */
class CutAfterFinish implements CallTracker {
  private armed = true;

  constructor(private readonly inner: StoreCallTracker, private readonly cut: () => void) {}

  async run(call: RunningCall, controller: Abortable, execute: (run: RunInfo) => Promise<Executed>): Promise<TrackedOutcome> {
    const outcome = await this.inner.run(call, controller, execute);
    if (!outcome.stored || !this.armed) return outcome;
    // The cut comes once the outcome is stored, before the runtime acks.
    const stored = outcome.stored.then(() => {
      if (this.armed) {
        this.armed = false;
        this.cut();
      }
    });
    return { ...outcome, stored };
  }

  start(info: { service: string; instanceId: string; running: () => number }): Promise<void> {
    return this.inner.start(info);
  }

  stop(): Promise<void> {
    return this.inner.stop();
  }
}

it('answers the redelivery from the store without running the handler again', async () => {
  const proxy = await FaultProxy.forUrl(amqpUrl());
  td.add(() => proxy.close());
  const tracker = createRedisTracker({ redis: redisUrl(), keyPrefix: tp.prefix, leaseMs: 3000, heartbeatMs: 500 });
  const service = await startService({
    urls: proxy.url(amqpUrl()),
    reconnect: { initialDelayMs: 50, maxDelayMs: 200 },
    namespace: ns.namespace,
    name: ns.service('redeliver'),
    methods: workMethods(tp.redis, tp.prefix),
    tracker: new CutAfterFinish(tracker, () => proxy.cutAll()),
  });
  td.add(() => service.close());

  const { callId, answer } = startCall<WorkResult>(client, 'work', { ms: 10, value: 5 });
  await expect(answer).resolves.toEqual({ value: 10, by: service.instanceId, attempt: 1 });

  // The redelivery comes once the worker has reconnected.
  await waitFor(() => service.stats().answeredFromStore >= 1, { timeoutMs: 10_000, message: 'the redelivery answered from the store' });
  const k = testKeys(tp.prefix, callId);
  expect(await tp.redis.get(k.starts)).toBe('1');
  expect(await tp.redis.get(k.effects)).toBe('1');
  expect(proxy.totalConnections).toBeGreaterThanOrEqual(2); // the worker did reconnect
  expect(tracker.health().answeredFromStore).toBe(1);
  expect(service.stats().answeredFromStore).toBe(1);
  expect(await view.status(callId)).toMatchObject({ state: 'done', attempt: 1, response: { result: { value: 10 } } });
}, 30_000);
