// Retries and dead letters on the real RabbitMQ and Redis: a call failing with a retryable error is
// retried after waits RabbitMQ keeps (delay queues dead-lettering back to the service queue) and
// succeeds on attempt 3, its record saying `retrying` with the next try's time meanwhile; a call
// failing every attempt ends in the dead-letter queue with its reason, is listed and shown by the
// broker's dlq.* methods, replayed (as a new call) and then succeeds; a purge empties the queue. A
// call waiting between attempts is listed (inflight.list, GET /inflight) as retrying until it ends.
import amqp from 'amqplib';
import { RetryableError, connectClient, startService, type RpcClient } from '@warren/amqp';
import { InflightView, createRedisTracker } from '@warren/inflight';
import { ErrorCode, JsonRpcError } from '@warren/jsonrpc';
import { Teardown, amqpUrl, redisUrl, uniqueName, waitFor } from '@warren/testkit';
import { deleteRedisKeys } from '../../test/integration/helpers';
import { TestNamespace, queueDepth } from '../../test/support/amqp';
import { startBroker } from '../src';

const td = new Teardown();
const ns = new TestNamespace();
const prefix = uniqueName('retry');
const service = ns.service('flaky');
const policy = { attempts: 3, backoffMs: 300, maxBackoffMs: 600 };
/** Long enough a wait to look at the call while it waits. */
const slowPolicy = { attempts: 2, backoffMs: 2000 };
let client: RpcClient;
let view: InflightView;
let url: string;
const gates: (() => void)[] = [];
/** Attempts seen per key, and keys that fail no more. */
const seen = new Map<string, number[]>();
const healed = new Set<string>();

beforeAll(async () => {
  td.add(() => ns.destroy());
  td.add(() => deleteRedisKeys(`${prefix}:`));
  td.add(async () => {
    const model = await amqp.connect(amqpUrl());
    const ch = await model.createChannel();
    for (const ms of [300, 600, 2000]) await ch.deleteQueue(ns.names.retryQueue(service, ms));
    await model.close();
  });
  view = new InflightView({ redis: redisUrl(), keyPrefix: prefix });
  td.add(() => view.close());
  const broker = await startBroker({ urls: amqpUrl(), namespace: ns.namespace, serviceName: ns.service('warren-broker'), port: 0, defaultMetrics: false, inflight: { list: () => view.list() } });
  td.add(() => broker.close());
  url = await broker.listen();
  const tracker = createRedisTracker({ redis: redisUrl(), keyPrefix: prefix, leaseMs: 3000, heartbeatMs: 100 });
  const worker = await startService({
    urls: amqpUrl(),
    namespace: ns.namespace,
    name: service,
    tracker,
    methods: {
      halfway: {
        handler: async (_params, ctx) => {
          ctx.progress(0.5, 'half way');
          await new Promise<void>((resolve) => gates.push(resolve));
          return 'whole';
        },
      },
      slowly: {
        retry: slowPolicy,
        handler: (_params, ctx) => {
          if (ctx.attempt < 2) throw new RetryableError('not yet');
          return ctx.attempt;
        },
      },
      flaky: {
        retry: policy,
        handler: (params, ctx) => {
          const { key, failUntil } = params as { key: string; failUntil: number };
          seen.set(key, [...(seen.get(key) ?? []), ctx.attempt]);
          if (ctx.attempt < failUntil && !healed.has(key)) throw new RetryableError('not yet', { attempt: ctx.attempt });
          return { key, attempt: ctx.attempt };
        },
      },
    },
  });
  td.add(() => worker.close());
  client = await connectClient({ urls: amqpUrl(), namespace: ns.namespace, defaultTimeoutMs: 20_000 });
  td.add(() => client.close());
});
afterAll(() => td.run());

it('retries a retryable failure after RabbitMQ-side delays and succeeds on attempt 3, showing retrying with the next try time meanwhile', async () => {
  const callId = client.nextCallId();
  const answer = client.call('flaky', { key: 'a', failUntil: 3 }, { id: callId });
  const states = new Set<string>();
  let nextTryAt: number | undefined;
  await waitFor(async () => {
    const status = await view.status(callId);
    states.add(status.state);
    if (status.state === 'retrying') nextTryAt = status.nextTryAt;
    return status.state === 'retrying';
  }, { message: 'record says retrying', intervalMs: 20 });
  expect(nextTryAt).toBeGreaterThan(Date.now() - 1000);
  // The wait is a queue's: the request sits in a delay queue, not in a process's timer.
  await expect(answer).resolves.toEqual({ key: 'a', attempt: 3 });
  expect(seen.get('a')).toEqual([1, 2, 3]);
  await expect(view.status(callId)).resolves.toMatchObject({ state: 'done', attempt: 3 });
  expect(await queueDepth(ns.names.retryQueue(service, 300))).toBe(0);
});

it('dead-letters a call failing every attempt with its reason; dlq.list/show find it, dlq.replay sends it back and it succeeds, dlq.purge empties', async () => {
  const error = await client.call('flaky', { key: 'b', failUntil: 99 }).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(JsonRpcError);
  expect((error as JsonRpcError).code).toBe(ErrorCode.InternalError);
  expect(seen.get('b')).toEqual([1, 2, 3]);
  await waitFor(async () => (await queueDepth(ns.names.deadLetterQueue(service))) === 1, { message: 'one dead letter' });

  const listed = await client.call<{ total: number; items: Record<string, unknown>[] }>('dlq.list', { service });
  expect(listed.total).toBe(1);
  const item = listed.items[0] as { id: string };
  expect(listed.items[0]).toMatchObject({ service, method: 'flaky', reason: 'retries_exhausted', code: ErrorCode.InternalError, attempts: 3, paramsBytes: JSON.stringify({ key: 'b', failUntil: 99 }).length });
  // Listing gives every message back.
  expect(await queueDepth(ns.names.deadLetterQueue(service))).toBe(1);
  const all = await client.call<{ total: number }>('dlq.list', {});
  expect(all.total).toBeGreaterThanOrEqual(1);

  const shown = await client.call<{ request: { method: string; params: unknown } }>('dlq.show', { service, id: item.id });
  expect(shown.request).toMatchObject({ method: 'flaky', params: { key: 'b', failUntil: 99 } });
  await expect(client.call('dlq.show', { service, id: 'nope' })).rejects.toMatchObject({ code: ErrorCode.InvalidParams });
  await expect(client.call('dlq.replay', { service })).rejects.toMatchObject({ code: ErrorCode.InvalidParams });

  healed.add('b');
  const replayed = await client.call<{ replayed: number; callIds: string[] }>('dlq.replay', { service, id: item.id, timeoutMs: 20_000 });
  expect(replayed.replayed).toBe(1);
  const [newCallId] = replayed.callIds;
  await waitFor(async () => (await view.status(newCallId as string)).state === 'done', { message: 'replayed call done' });
  await expect(view.status(newCallId as string)).resolves.toMatchObject({ response: { result: { key: 'b', attempt: 1 } } });
  expect((await client.call<{ total: number }>('dlq.list', { service })).total).toBe(0);

  await client.call('flaky', { key: 'c', failUntil: 99 }).catch(() => undefined);
  await waitFor(async () => (await queueDepth(ns.names.deadLetterQueue(service))) === 1, { message: 'another dead letter' });
  await expect(client.call('dlq.purge', { service })).resolves.toEqual({ purged: 1 });
  expect(await queueDepth(ns.names.deadLetterQueue(service))).toBe(0);
});

it('lists a call waiting between attempts as retrying (inflight.list, GET /inflight) with its attempt and next try, and drops it when it ends', async () => {
  const callId = client.nextCallId();
  const answer = client.call('slowly', {}, { id: callId });
  await waitFor(async () => (await view.status(callId)).state === 'retrying', { message: 'record says retrying', intervalMs: 20 });
  const status = await view.status(callId);
  const listed = (await view.list({ service })).find((c) => c.callId === callId);
  expect(listed).toMatchObject({ callId, state: 'retrying', method: 'slowly', service, attempt: 1, nextTryAt: status.nextTryAt });
  expect(listed?.leaseUntil).toBeUndefined();
  expect((await view.list({ service: 'someone-else' })).some((c) => c.callId === callId)).toBe(false);
  type Listed = { calls: { callId: string; state?: string; attempt?: number; nextTryAt?: number }[] };
  const viaGateway = (await (await fetch(`${url}/inflight`)).json()) as Listed;
  expect(viaGateway.calls.find((c) => c.callId === callId)).toMatchObject({ state: 'retrying', attempt: 1, nextTryAt: status.nextTryAt });

  await expect(answer).resolves.toBe(2);
  expect((await view.list({ service })).some((c) => c.callId === callId)).toBe(false);
  expect(((await (await fetch(`${url}/inflight`)).json()) as Listed).calls.some((c) => c.callId === callId)).toBe(false);
});

it('shows a running call with its progress in the gateway: GET /inflight; the dlq methods answer through POST /rpc', async () => {
  const callId = client.nextCallId();
  const answer = client.call('halfway', {}, { id: callId });
  type Listed = { calls: { callId: string; progress?: { fraction: number; message?: string } }[] };
  let listed: Listed | undefined;
  await waitFor(async () => {
    listed = (await (await fetch(`${url}/inflight`)).json()) as Listed;
    return listed.calls.some((c) => c.callId === callId && c.progress !== undefined);
  }, { message: 'progress in GET /inflight', timeoutMs: 10_000 });
  expect(listed?.calls.find((c) => c.callId === callId)?.progress).toMatchObject({ fraction: 0.5, message: 'half way' });
  await waitFor(() => gates.length === 1, { message: 'handler waiting' });
  gates.shift()?.();
  await expect(answer).resolves.toBe('whole');

  const res = await fetch(`${url}/rpc`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', method: 'dlq.list', params: { service, limit: 5 }, id: 1 }) });
  expect(await res.json()).toEqual({ jsonrpc: '2.0', result: { total: 0, items: [] }, id: 1 });
});
