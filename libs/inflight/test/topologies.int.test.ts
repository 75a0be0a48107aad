// Tracking on the other Redis topologies ioredis offers, started by the test
// itself (redis-server processes on free ports): a three-node Redis Cluster,
// where every script must stay in one slot and cancels cross nodes, and a
// master with a replica under Sentinel, failed over in the middle of a load.
import { startService, type RpcClient } from '@warren/amqp';
import { ErrorCode, JsonRpcError } from '@warren/jsonrpc';
import { RedisServers, amqpUrl, redisCli, waitFor } from '@warren/testkit';
import { createRedisTracker } from '../src/redis-tracker';
import { InflightView } from '../src/view';
import { testKeys, workMethods, type WorkResult } from './fixtures/methods';
import { TestBed, startCall } from './support';

const bed = new TestBed();
const { td, ns, tp } = bed;
let client: RpcClient;

beforeAll(async () => {
  ({ client } = await bed.start());
});
afterAll(() => bed.close());

// These start redis-server processes of their own; where there is no redis-server binary (a
// testcontainers-only machine) they are skipped, and say so.
const withServers = RedisServers.available() ? it : it.skip;
if (!RedisServers.available()) console.warn('redis-server not on the PATH: Redis Cluster and Sentinel tests skipped');

withServers('tracks, lists, cancels and answers status on a three-node Redis Cluster', async () => {
  const { servers, nodes } = await RedisServers.cluster(3);
  td.add(() => servers.stop());
  const redis = { cluster: nodes };
  const tracker = createRedisTracker({ redis, keyPrefix: tp.prefix, leaseMs: 3000, heartbeatMs: 100 });
  const service = ns.service('on-cluster');
  const s = await startService({ urls: amqpUrl(), namespace: ns.namespace, name: service, instanceId: 'w-cluster', prefetch: 16, methods: workMethods(tp.redis, tp.prefix), tracker });
  td.add(() => s.close());
  const view = new InflightView({ redis, keyPrefix: tp.prefix });
  td.add(() => view.close());
  expect(tracker.state).toBe('tracking');

  // Thirty calls: their records land in slots all over the cluster, each script in its call's slot.
  const calls = Array.from({ length: 30 }, (_, i) => startCall<WorkResult>(client, 'work', { ms: 5, value: i }));
  const results = await Promise.all(calls.map((c) => c.answer));
  expect(results.map((r) => r.value)).toEqual(calls.map((_, i) => i * 2));
  const statuses = await Promise.all(calls.map((c) => view.status(c.callId)));
  expect(statuses.map((st) => st.state)).toEqual(Array(30).fill('done'));
  expect(statuses[3]).toMatchObject({ service, method: 'work', worker: 'w-cluster', attempt: 1, response: { result: { value: 6 } } });
  const sizes = await Promise.all(nodes.map(async (n) => Number(await redisCli(n.port, 'dbsize'))));
  expect(sizes.filter((n) => n > 0).length).toBeGreaterThanOrEqual(2);
  expect(tracker.health()).toMatchObject({ state: 'tracking', degradedTransitions: 0 });

  // A slow call is listed while it runs; a cancel published on whichever node reaches its worker.
  const slow = startCall<WorkResult>(client, 'work', { ms: 10_000, value: 1 });
  await waitFor(async () => (await view.list({ service })).some((c) => c.callId === slow.callId), { message: 'slow call listed' });
  expect(await view.workers({ service })).toEqual([expect.objectContaining({ instanceId: 'w-cluster' })]);
  expect(await view.cancel(slow.callId)).toMatchObject({ outcome: 'signalled', worker: 'w-cluster' });
  const err = await slow.answer.then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(JsonRpcError);
  expect((err as JsonRpcError).code).toBe(ErrorCode.Cancelled);
  expect(Number(await tp.redis.get(testKeys(tp.prefix, slow.callId).aborts))).toBe(1);
  await waitFor(async () => (await view.status(slow.callId)).state === 'cancelled', { message: 'cancelled recorded' });

  // Cancelled by id before any worker took it: the mark, published by the script on the node of the call's
  // slot, reaches the worker's subscriber (on another node, maybe) over the cluster bus, and the call is
  // answered -32003 without its handler starting (a mark not heard would let it start, then abort it).
  await expectCancelledBeforeSent(view, 'work');
}, 60_000);

withServers('keeps calls flowing through a Sentinel failover and tracks on the promoted replica', async () => {
  const { servers, master, replica, sentinels, name } = await RedisServers.sentinel();
  td.add(() => servers.stop());
  const redis = { sentinels, name };
  const tracker = createRedisTracker({ redis, keyPrefix: tp.prefix, commandTimeoutMs: 300, leaseMs: 3000, heartbeatMs: 100 });
  const s = await startService({ urls: amqpUrl(), namespace: ns.namespace, name: ns.service('on-sentinel'), prefetch: 8, methods: workMethods(tp.redis, tp.prefix, undefined, 'load'), tracker });
  td.add(() => s.close());
  const view = new InflightView({ redis, keyPrefix: tp.prefix });
  td.add(() => view.close());
  expect(tracker.state).toBe('tracking');

  let done = 0;
  let stop = false;
  const failures: unknown[] = [];
  const loop = async (): Promise<void> => {
    for (let i = 0; !stop; i++) {
      await startCall(client, 'load', { ms: 2, value: i }).answer.then(() => done++, (e: unknown) => failures.push(e));
    }
  };
  const load = Promise.all(Array.from({ length: 8 }, loop));
  // A failed expectation below must not leave the loops calling into a closed client.
  td.add(() => void (stop = true));
  const before = startCall<WorkResult>(client, 'load', { ms: 2, value: 5 });
  await before.answer;
  await waitFor(() => done >= 50, { timeoutMs: 15_000, message: '50 calls before the failover' });

  // Sentinel replication is asynchronous: a write the master acknowledged can be lost in a failover. This test
  // is about what was replicated, so the replica catches up with the master's offset before the kill.
  const offset = replOffset(await redisCli(master.port, 'info', 'replication'), 'master_repl_offset');
  await waitFor(async () => replOffset(await redisCli(replica.port, 'info', 'replication'), 'slave_repl_offset') >= offset, { timeoutMs: 10_000, intervalMs: 50, message: 'the replica caught up' });
  await servers.kill(master.port);
  await waitFor(async () => (await redisCli(replica.port, 'role')).startsWith('master'), { timeoutMs: 20_000, intervalMs: 100, message: 'replica promoted' });
  await waitFor(() => tracker.state === 'tracking' && tracker.health().degradedTransitions >= 1, { timeoutMs: 20_000, message: 'tracking on the new master' });
  const doneAtResume = done;
  await waitFor(() => done >= doneAtResume + 50, { timeoutMs: 15_000, message: '50 calls after the failover' });
  stop = true;
  await load;
  expect(failures).toEqual([]);

  // The new master has what was recorded before the failover (replicated) and what came after. The view's own
  // connection may still be finding the new master (the tracker's found it first): asked until it answers.
  await waitFor(async () => (await view.status(before.callId).catch(() => undefined)) !== undefined, { timeoutMs: 20_000, message: 'the view on the new master' });
  expect(await view.status(before.callId)).toMatchObject({ state: 'done', response: { result: { value: 10 } } });
  const after = startCall<WorkResult>(client, 'load', { ms: 2, value: 8 });
  await after.answer;
  await waitFor(async () => (await view.status(after.callId)).state === 'done', { message: 'a call after the failover recorded' });

  // A call cancelled by id on the new master before it was sent is answered -32003 without its handler
  // starting: the worker heard the mark (its subscription followed the master), or, had it not found the
  // master yet, waited for the claim's answer, as first deliveries do while not listening.
  await expectCancelledBeforeSent(view, 'load');
}, 90_000);

/**
 * Cancels by id a call not sent yet (a mark), waits for the mark to spread, then sends it: the answer is
 * -32003, its handler never started, and the record says cancelled.
 */
async function expectCancelledBeforeSent(view: InflightView, method: string): Promise<void> {
  const callId = client.nextCallId();
  expect(await view.cancel(callId)).toMatchObject({ outcome: 'marked' });
  await new Promise((resolve) => setTimeout(resolve, 300));
  const call = startCall<WorkResult>(client, method, { ms: 2000, value: 3 });
  expect(call.callId).toBe(callId);
  const err = await call.answer.then(() => undefined, (e: unknown) => e);
  expect((err as JsonRpcError).code).toBe(ErrorCode.Cancelled);
  expect(Number(await tp.redis.get(testKeys(tp.prefix, callId).starts))).toBe(0);
  await waitFor(async () => (await view.status(callId)).state === 'cancelled', { message: 'cancelled recorded' });
}

/** A replication offset field of `INFO replication` (-1 when absent). */
function replOffset(info: string, field: 'master_repl_offset' | 'slave_repl_offset'): number {
  const m = new RegExp(`^${field}:(\\d+)`, 'm').exec(info);
  return m ? Number(m[1]) : -1;
}
