// The bounds docs/reliability.md promises, each pushed past its limit: the
// dead-letter queue's length, a reply queue that expires while its client is
// away, prefetch, the pending-call table, and the shutdown grace period.
import amqp from 'amqplib';
import { Redis } from 'ioredis';
import {
  connectClient, startService, type CallTracker, type RpcClient, type ServiceMethod, type ServiceOptions, type WarrenService,
} from '@warren/amqp';
import { createRedisTracker } from '@warren/inflight';
import { ErrorCode, RpcReplyQueueLostError, wireErrorOf } from '@warren/jsonrpc';
import { FaultProxy, Teardown, amqpUrl, redisUrl, waitFor } from '@warren/testkit';
import { pause, runsKey, workMethods } from '../../../scripts/soak-worker';
import { TestNamespace, publishRaw, queueDepth, queueExists } from '../../support/amqp';
import { deleteRedisKeys } from '../helpers';

const td = new Teardown();
const ns = new TestNamespace();
const prefix = ns.namespace;
const redis = new Redis(redisUrl(), { maxRetriesPerRequest: 1 });
let client: RpcClient;

beforeAll(async () => {
  td.add(() => ns.destroy());
  td.add(() => deleteRedisKeys(`${prefix}:`));
  td.add(() => redis.disconnect());
  client = await connectClient({ urls: amqpUrl(), namespace: ns.namespace, defaultTimeoutMs: 10_000 });
  td.add(() => client.close());
});
afterAll(() => td.run());

async function service(options: Omit<ServiceOptions, 'namespace'>): Promise<WarrenService> {
  const s = await startService({ urls: amqpUrl(), namespace: ns.namespace, ...options, name: ns.service(options.name) });
  td.add(() => s.close());
  return s;
}

/** Takes every message off a queue (basic.get), returning the bodies in order. */
async function drain(queue: string): Promise<string[]> {
  const model = await amqp.connect(amqpUrl());
  try {
    const ch = await model.createChannel();
    const bodies: string[] = [];
    for (let msg = await ch.get(queue, { noAck: true }); msg; msg = await ch.get(queue, { noAck: true })) bodies.push(msg.content.toString());
    return bodies;
  } finally {
    await model.close().catch(() => undefined);
  }
}

/** The wire code a call fails with (a local failure by its wire form), or the thrown value itself when it is neither family. */
const codeOf = (p: Promise<unknown>): Promise<unknown> => p.then(() => 'resolved', (err: unknown) => wireErrorOf(err)?.code ?? err);

it('the dead-letter queue keeps at most deadLetterMax messages (x-max-length), dropping the oldest', async () => {
  const s = await service({ name: 'dlq', deadLetterMax: 5, methods: { 'dlq.ok': { handler: () => 'ok' } } });
  for (let i = 0; i < 8; i++) await publishRaw(ns.names.requestExchange, 'dlq.ok', Buffer.from(`{broken ${i}`), {});
  await waitFor(() => s.stats().deadLettered === 8, { message: 'all 8 dead-lettered' });
  await waitFor(async () => (await queueDepth(ns.names.deadLetterQueue('dlq'))) === 5, { message: 'dead-letter queue capped at 5' });
  expect(await drain(ns.names.deadLetterQueue('dlq'))).toEqual([3, 4, 5, 6, 7].map((i) => `{broken ${i}`));
  await expect(client.call('dlq.ok')).resolves.toBe('ok');
});

it('a reply queue that expired while its client was away: calls on the wire fail -32007 at the reconnect, not at their deadline', async () => {
  await service({ name: 'expiry', methods: workMethods(redis, prefix, 'expiry.run') });
  const proxy = await FaultProxy.forUrl(amqpUrl());
  td.add(() => proxy.close());
  const away = await connectClient({ urls: proxy.url(amqpUrl()), namespace: ns.namespace, replyQueueExpiresMs: 1000, reconnect: { initialDelayMs: 50, maxDelayMs: 200 } });
  td.add(() => away.close());
  const callId = away.nextCallId();
  const startedAt = Date.now();
  const call = away.call('expiry.run', { ms: 300, n: 1 }, { timeoutMs: 20_000, id: callId }).catch((err: unknown) => err);
  await waitFor(async () => (await redis.llen(runsKey(prefix, callId))) === 1, { message: 'call running' });
  proxy.refuse(true);
  proxy.cutAll();
  // The reply comes back to a queue nobody consumes; x-expires removes the queue, reply and all. Nothing can
  // watch for that without resetting the expiry (a passive declare counts as use), so this waits it out once.
  await new Promise((r) => setTimeout(r, 2500));
  expect(await queueExists(away.replyQueue)).toBe(false);
  proxy.refuse(false);
  const error = await call;
  expect(error).toBeInstanceOf(RpcReplyQueueLostError);
  expect(wireErrorOf(error)).toMatchObject({ code: ErrorCode.ConnectionLost, data: { reason: 'reply_queue_lost' } });
  expect(Date.now() - startedAt).toBeLessThan(15_000);
  expect(await redis.llen(runsKey(prefix, callId))).toBe(1);
  // The client declared its queue again: new calls work.
  await expect(away.call('expiry.run', { ms: 1, n: 2 })).resolves.toBe(4);
  expect(away.stats()).toMatchObject({ pending: 0, onWire: 0, buffered: 0 });
}, 30_000);

it('prefetch bounds the handlers one instance runs at once', async () => {
  let running = 0;
  let most = 0;
  await service({
    name: 'pf',
    prefetch: 3,
    methods: {
      'pf.run': {
        handler: async (_p, ctx) => {
          most = Math.max(most, ++running);
          await pause(20, ctx.signal).finally(() => running--);
          return 'ok';
        },
      },
    },
  });
  await Promise.all(Array.from({ length: 30 }, () => client.call('pf.run')));
  expect(most).toBe(3);
});

it('maxPending: past it a call fails at once with -32004 Overloaded, and the others are unaffected', async () => {
  await service({ name: 'pending', methods: workMethods(redis, prefix, 'pending.run') });
  const small = await connectClient({ urls: amqpUrl(), namespace: ns.namespace, maxPending: 5 });
  td.add(() => small.close());
  const five = Array.from({ length: 5 }, (_v, n) => small.call('pending.run', { ms: 300, n }));
  expect(await codeOf(small.call('pending.run', { ms: 1, n: 9 }))).toBe(ErrorCode.Overloaded);
  await expect(Promise.all(five)).resolves.toEqual([0, 2, 4, 6, 8]);
  await expect(small.call('pending.run', { ms: 1, n: 9 })).resolves.toBe(18);
});

it('shutdown past shutdownGraceMs aborts the running handler and requeues its request; another instance runs it, one answer', async () => {
  const runs: { instance: string; attempt: number; aborted: boolean }[] = [];
  const methods = (instance: string): Record<string, ServiceMethod> => ({
    'grace.run': {
      handler: async (_p, ctx) => {
        const run = { instance, attempt: ctx.attempt, aborted: false };
        runs.push(run);
        // The first attempt would take a minute; the one after the requeue is quick.
        await pause(ctx.attempt === 1 ? 60_000 : 10, ctx.signal).catch((err: unknown) => {
          run.aborted = true;
          throw err;
        });
        return instance;
      },
    },
  });
  const tracker = (): CallTracker => createRedisTracker({ redis: redisUrl(), keyPrefix: prefix, leaseMs: 3000, heartbeatMs: 500 });
  const first = await service({ name: 'grace', instanceId: 'first', prefetch: 1, shutdownGraceMs: 300, methods: methods('first'), tracker: tracker() });
  const call = client.call('grace.run', [], { timeoutMs: 15_000 });
  await waitFor(() => runs.length === 1, { message: 'running on the first instance' });
  await service({ name: 'grace', instanceId: 'second', methods: methods('second'), tracker: tracker() });
  await first.close();
  await expect(call).resolves.toBe('second');
  expect(runs).toEqual([{ instance: 'first', attempt: 1, aborted: true }, { instance: 'second', attempt: 2, aborted: false }]);
  expect(first.stats().running).toBe(0);
}, 30_000);
