// The finish script's outcome history against the real Redis: each stored outcome is added once to
// the stream of its kind, in the same script; failures outlive a burst of successes past the success
// bound; both streams carry a TTL; a store without history (or on a cluster) adds nothing.
import { ErrorCode } from '@warren/jsonrpc';
import { silentLogger } from '@warren/logger';
import { Teardown, redisUrl, uniqueName, waitFor } from '@warren/testkit';
import { encodeMeta } from '../src/record-codec';
import { keys } from '../src/keys';
import { RedisStore } from '../src/redis-store';
import type { ClaimArgs } from '../src/store-port';
import { InflightView } from '../src/view';
import { TestPrefix } from './support';

const td = new Teardown();
const tp = new TestPrefix();
const k = keys(tp.prefix);
let store: RedisStore;
let view: InflightView;
const bounds = { done: { entries: 100, ageMs: 600_000 }, failed: { entries: 1000, ageMs: 3_600_000 } };

beforeAll(async () => {
  td.add(() => tp.destroy());
  store = new RedisStore(redisUrl(), 2000, k, silentLogger(), { autoPipelining: false, history: bounds });
  td.add(() => store.close());
  view = new InflightView({ redis: redisUrl(), keyPrefix: tp.prefix });
  td.add(() => view.close());
  expect(await store.ready(5000)).toBe(true);
});
afterAll(() => td.run());

const deadline = Date.now() + 600_000;
const claim = (method: string): ClaimArgs => ({
  token: uniqueName('tok'), worker: 'w1', meta: encodeMeta({ service: 'svc', method, deadline, rid: '7' }), attempt: 1, leaseMs: 5000, runningTtlMs: 20_000, maxAttempts: 3, finishedTtlMs: 30_000, workerLostCode: ErrorCode.WorkerLost, takeover: false,
});
const ok = JSON.stringify({ jsonrpc: '2.0', result: 1, id: 7 });
const failed = JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: 'boom', data: { n: 1 } }, id: 7 });

it('keeps failures past a burst of successes beyond the success bound, once each, with a TTL on each stream', async () => {
  const failures = Array.from({ length: 5 }, () => uniqueName('f'));
  for (const id of failures) {
    await store.claim(id, claim('work'));
    expect(await store.finish(id, { state: 'failed', result: failed, ttlMs: 30_000, code: '-32000' })).toBe(1);
  }
  // Successes finished together: batched into few scripts, as a busy worker's are.
  const successes = Array.from({ length: 1000 }, () => uniqueName('s'));
  await Promise.all(successes.map((id) => store.claim(id, claim('work'))));
  await Promise.all(successes.map((id) => store.finish(id, { state: 'done', result: ok, ttlMs: 30_000, code: '' })));
  // A second finish of a call stores nothing and adds nothing.
  expect(await store.finish(failures[0] as string, { state: 'done', result: ok, ttlMs: 30_000, code: '' })).toBe(0);

  const doneLength = await tp.redis.xlen(k.history('done'));
  // MAXLEN ~ trims whole stream nodes (100 entries each): about the bound, never the burst.
  expect(doneLength).toBeGreaterThanOrEqual(100);
  expect(doneLength).toBeLessThan(400);
  expect(await tp.redis.xlen(k.history('failed'))).toBe(5);
  expect(await tp.keysWithoutTtl()).toEqual([]);
  expect(await tp.redis.pttl(k.history('failed'))).toBeGreaterThan(600_000);

  const page = await view.history({ state: 'failures', limit: 10 });
  expect(page.items.map((c) => c.callId)).toEqual([...failures].reverse());
  expect(page.items[0]).toMatchObject({ state: 'failed', method: 'work', service: 'svc', worker: 'w1', attempt: 1, code: -32000, error: { message: 'boom', data: { n: 1 } } });
  const newest = await view.history({ limit: 3 });
  expect(newest.items.map((c) => c.callId)).toEqual(successes.slice(-3).reverse());
  expect(newest.items[0]).not.toHaveProperty('error');
  expect(await view.call(failures[2] as string)).toMatchObject({ state: 'failed', history: { callId: failures[2], code: -32000 } });
}, 30_000);

it('adds nothing without history (a tracker told `history: false`)', async () => {
  const other = new TestPrefix();
  td.add(() => other.destroy());
  const plain = new RedisStore(redisUrl(), 2000, keys(other.prefix), silentLogger(), { autoPipelining: false, history: false });
  td.add(() => plain.close());
  expect(await plain.ready(5000)).toBe(true);
  const id = uniqueName('c');
  await plain.claim(id, claim('work'));
  expect(await plain.finish(id, { state: 'done', result: ok, ttlMs: 30_000, code: '' })).toBe(1);
  expect(await other.keys()).toEqual([keys(other.prefix).call(id)]);
});

it("keeps a call's earlier attempts, how each ended, beside its record with a TTL", async () => {
  const id = uniqueName('a');
  const first = { ...claim('work'), leaseMs: 50, takeover: true };
  expect(await store.claim(id, first)).toMatchObject({ kind: 'run', attempt: 1 });
  // w1's lease runs out: w2's claim takes the call over, and attempt 1 goes on the list as lost.
  await waitFor(async () => (await store.claim(id, { ...claim('work'), worker: 'w2', takeover: true })).kind === 'run', { message: 'taken over' });
  const second = (await store.record(id))['token'] as string;
  // Attempt 2 fails retryably and waits; attempt 3 starts on w3.
  expect(await store.retrying(id, second, Date.now() + 10)).toBe(1);
  expect(await store.claim(id, { ...claim('work'), worker: 'w3', attempt: 3 })).toMatchObject({ kind: 'run', attempt: 3 });
  const detail = await view.call(id);
  expect(detail).toMatchObject({ state: 'running', worker: 'w3', attempt: 3 });
  expect(detail.attempts.map((a) => [a.attempt, a.worker, a.outcome])).toEqual([[1, 'w1', 'lost'], [2, 'w2', 'retried']]);
  expect(detail.attempts[0]?.endedAt).toBeGreaterThanOrEqual(detail.attempts[0]?.startedAt ?? Infinity);
  expect(await tp.redis.pttl(k.attempts(id))).toBeGreaterThan(0);
});

it('adds a call the claim ends itself (every attempt lost its worker: WorkerLost) to the failures', async () => {
  const id = uniqueName('d');
  expect(await store.claim(id, { ...claim('work'), leaseMs: 50, maxAttempts: 1 })).toMatchObject({ kind: 'run', attempt: 1 });
  await waitFor(async () => (await store.claim(id, { ...claim('work'), worker: 'w2', maxAttempts: 1, takeover: true })).kind === 'dead', { message: 'dead-lettered' });
  const page = await view.history({ code: ErrorCode.WorkerLost });
  expect(page.items.map((c) => [c.callId, c.state, c.worker])).toEqual([[id, 'failed', 'w1']]);
});
