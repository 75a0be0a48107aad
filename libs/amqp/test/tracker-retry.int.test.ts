// The runtime's side of a tracker's `retry` decision (a call whose previous worker was lost, under its
// method's retry policy), over the real RabbitMQ with a scripted tracker: the request goes to the delay
// queue for that wait as the next attempt and comes back after it; the tracker is handed the method's
// waits; a wait with no delay queue declared is requeued rather than dropped by the default exchange.
import amqp from 'amqplib';
import { connectClient, startService, type CallTracker, type RpcClient } from '@warren/amqp';
import { outcomeOf, type Executed, type RunInfo, type RunningCall, type TrackedOutcome } from '@warren/calls';
import { Teardown, amqpUrl } from '@warren/testkit';
import { TestNamespace, queueDepth } from '../../../test/support/amqp';

const td = new Teardown();
afterAll(() => td.run());
const ns = new TestNamespace();
const service = ns.service('lossy');
const policy = { attempts: 3, backoffMs: 200 };
let client: RpcClient;

/** Answers `retry` with the scripted waits in turn (one per delivery), then lets the call run. */
class ScriptedTracker implements CallTracker {
  readonly seen: RunningCall[] = [];
  constructor(readonly waits: number[]) {}
  async run(call: RunningCall, _abort: unknown, execute: (run: RunInfo) => Promise<Executed>): Promise<TrackedOutcome> {
    this.seen.push(call);
    const delayMs = this.waits.shift();
    // As the Redis tracker settles a call whose worker was lost under a retry policy.
    if (delayMs !== undefined) return { reply: undefined, settle: { action: 'retry', delayMs, nextAttempt: call.attempt + 1 }, source: 'store' };
    return outcomeOf(await execute({ attempt: call.attempt }));
  }
}

const tracker = new ScriptedTracker([]);
const attempts: number[] = [];

beforeAll(async () => {
  td.add(() => ns.destroy());
  td.add(async () => {
    const model = await amqp.connect(amqpUrl());
    const ch = await model.createChannel();
    for (const ms of [200, 400]) await ch.deleteQueue(ns.names.retryQueue(service, ms));
    await model.close();
  });
  const s = await startService({
    urls: amqpUrl(), namespace: ns.namespace, name: service, tracker,
    methods: { work: { retry: policy, handler: (_p, ctx) => (attempts.push(ctx.attempt), ctx.attempt) } },
  });
  td.add(() => s.close());
  client = await connectClient({ urls: amqpUrl(), namespace: ns.namespace, defaultTimeoutMs: 10_000 });
  td.add(() => client.close());
});

beforeEach(() => {
  tracker.seen.length = 0;
  attempts.length = 0;
});

it('sends the call to the delay queue for the wait as the next attempt; it comes back and runs as that attempt', async () => {
  tracker.waits.push(200);
  const started = Date.now();
  await expect(client.call('work', {})).resolves.toBe(2);
  expect(Date.now() - started).toBeGreaterThanOrEqual(200);
  expect(attempts).toEqual([2]);
  expect(tracker.seen.map((c) => c.attempt)).toEqual([1, 2]);
  // The tracker is told the method's policy, as waits after each failed attempt.
  expect(tracker.seen[0]).toMatchObject({ maxAttempts: 3, retryDelaysMs: [200, 400] });
});

it('requeues a call whose wait has no delay queue here, rather than publish it where the default exchange drops it', async () => {
  tracker.waits.push(12_345);
  const answer = await client.call('work', {});
  // Run once, on its redelivery (which RabbitMQ marks redelivered: it counts as the next attempt).
  expect(attempts).toEqual([answer]);
  expect(tracker.seen).toHaveLength(2);
  expect(await queueDepth(ns.names.retryQueue(service, 200))).toBe(0);
});
