// kill -9 a worker in the middle of a handler: the call completes on another
// instance, its side effect is committed exactly once, the caller gets one
// answer; and past maxAttempts, the caller gets WorkerLostError and the
// request is dead-lettered.
import { join } from 'node:path';
import { startService, type RpcClient, type WarrenService } from '@warren/amqp';
import { ErrorCode, JsonRpcError } from '@warren/jsonrpc';
import { amqpUrl, redisUrl, spawnTs, waitFor, type TsChild } from '@warren/testkit';
import { queueDepth } from '../../../test/support/amqp';
import { createRedisTracker } from '../src/redis-tracker';
import { InflightView } from '../src/view';
import { testKeys, workMethods, type WorkResult } from './fixtures/methods';
import { TestBed, startCall } from './support';

const bed = new TestBed();
const { td, ns, tp } = bed;
const leaseMs = 1000;
let client: RpcClient;
let view: InflightView;

beforeAll(async () => {
  ({ client, view } = await bed.start());
});
afterAll(() => bed.close());

function spawnWorker(service: string, instanceId: string, extra: Record<string, string> = {}): TsChild {
  const child = spawnTs(join(__dirname, 'fixtures', 'worker.ts'), [], {
    WORKER_AMQP_URL: amqpUrl(),
    WORKER_REDIS_URL: redisUrl(),
    WORKER_NAMESPACE: ns.namespace,
    WORKER_PREFIX: tp.prefix,
    WORKER_SERVICE: service,
    WORKER_INSTANCE: instanceId,
    WORKER_LEASE_MS: String(leaseMs),
    ...extra,
  });
  td.add(() => child.kill('SIGKILL'));
  return child;
}

// Each test serves its own method: services of one namespace bound to the same method would each get a copy.
async function startSurvivor(service: string, method: string, maxAttempts = 3): Promise<WarrenService> {
  const tracker = createRedisTracker({ redis: redisUrl(), keyPrefix: tp.prefix, leaseMs, heartbeatMs: leaseMs / 4, maxAttempts });
  const survivor = await startService({ urls: amqpUrl(), namespace: ns.namespace, name: service, instanceId: 'survivor', methods: workMethods(tp.redis, tp.prefix, undefined, method), tracker });
  td.add(() => survivor.close());
  return survivor;
}

async function count(key: string): Promise<number> {
  return Number((await tp.redis.get(key)) ?? 0);
}

it('completes the call on another instance, with its side effect committed exactly once and one answer', async () => {
  const service = ns.service('crash');
  const victim = spawnWorker(service, 'victim', { WORKER_METHOD: 'work1' });
  await victim.waitForLine(/^ready$/, 20_000);

  const { callId, answer } = startCall<WorkResult>(client, 'work1', { ms: 60_000, retryMs: 10, value: 21 });
  await victim.waitForLine(new RegExp(`^started ${callId.replace(/[.]/g, '\\.')} 1$`));
  expect(await view.status(callId)).toMatchObject({ state: 'running', worker: 'victim', attempt: 1 });

  // The survivor comes up while the victim still holds the call, then the victim dies mid-handler.
  await startSurvivor(service, 'work1');
  await victim.kill('SIGKILL');

  await expect(answer).resolves.toEqual({ value: 42, by: 'survivor', attempt: 2 });
  const k = testKeys(tp.prefix, callId);
  expect(await count(k.starts)).toBe(2); // both runs started...
  expect(await count(k.effects)).toBe(1); // ...only the second committed
  expect(await view.status(callId)).toMatchObject({ state: 'done', worker: 'survivor', attempt: 2, response: { result: { value: 42, by: 'survivor', attempt: 2 } } });
  expect(client.stats().lateReplies).toBe(0);
}, 40_000);

it('past maxAttempts the caller gets WorkerLostError and the request is dead-lettered', async () => {
  const service = ns.service('crash-dead');
  const victim = spawnWorker(service, 'victim2', { WORKER_MAX_ATTEMPTS: '1', WORKER_METHOD: 'work2' });
  await victim.waitForLine(/^ready$/, 20_000);

  const { callId, answer } = startCall(client, 'work2', { ms: 60_000, value: 1 });
  await victim.waitForLine(/^started /);
  await startSurvivor(service, 'work2', 1);
  await victim.kill('SIGKILL');

  const error = await answer.then(() => undefined, (err: unknown) => err);
  expect(error).toBeInstanceOf(JsonRpcError);
  expect((error as JsonRpcError).code).toBe(ErrorCode.WorkerLost);
  expect(await count(testKeys(tp.prefix, callId).starts)).toBe(1);
  await waitFor(async () => (await queueDepth(ns.names.deadLetterQueue(service))) === 1, { message: 'request dead-lettered' });
  expect(await view.status(callId)).toMatchObject({ state: 'failed', attempt: 1, response: { error: { code: ErrorCode.WorkerLost } } });
}, 40_000);

it('left no key without a TTL', async () => {
  expect(await tp.keysWithoutTtl()).toEqual([]);
});
