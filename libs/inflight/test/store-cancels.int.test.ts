// The cancel scripts and the workers' heartbeats against the real Redis: cancel marks, the cancel
// channel and its mark index, live workers, and a TTL on every key written.
import { Redis } from 'ioredis';
import { silentLogger } from '@warren/logger';
import { Teardown, once, redisUrl, uniqueName, waitFor } from '@warren/testkit';
import { encodeMeta, toCallStatus } from '../src/record-codec';
import { keys } from '../src/keys';
import { RedisStore } from '../src/redis-store';
import { args, deadline, result } from './store-harness';
import { TestPrefix } from './support';

const td = new Teardown();
const tp = new TestPrefix();
const k = keys(tp.prefix);
let store: RedisStore;

beforeAll(async () => {
  td.add(() => tp.destroy());
  store = new RedisStore(redisUrl(), 1000, k, silentLogger());
  td.add(() => store.close());
  expect(await store.ready(5000)).toBe(true);
});
afterAll(() => td.run());

it('cancel: marks a call not seen yet, signals the owner of a running one, and is too late for a finished one', async () => {
  const sub = new Redis(redisUrl());
  td.add(() => sub.disconnect());
  await sub.subscribe(k.cancelChannel('w1'));

  const queued = uniqueName('c');
  expect(await store.cancel(queued, 60_000)).toEqual({ outcome: 'marked', worker: undefined });
  expect(await tp.redis.pttl(k.call(queued))).toBeGreaterThan(50_000);
  expect(await store.claim(queued, args())).toEqual({ kind: 'cancelled' });
  expect(await store.cancel(queued, 60_000)).toMatchObject({ outcome: 'cancelled' });

  const running = uniqueName('c');
  const owner = args();
  await store.claim(running, owner);
  const message = once<[string, string]>(sub, 'message');
  expect(await store.cancel(running, 60_000)).toEqual({ outcome: 'signalled', worker: 'w1', receivers: 1 });
  expect(await message).toEqual([k.cancelChannel('w1'), running]);
  // The renewal reports the cancel too, for an owner that missed the message.
  expect(await store.renew(running, owner.token, 5000)).toBe(1);

  const done = uniqueName('c');
  const doneOwner = args();
  await store.claim(done, doneOwner);
  await store.finish(done, { state: 'done', result: result(1), ttlMs: 30_000, code: '' });
  expect(await store.cancel(done, 60_000)).toEqual({ outcome: 'finished', state: 'done' });
});

it('publishes every cancel mark to all workers with its TTL; a claim whose handler runs already keeps the mark on its running record', async () => {
  const sub = new Redis(redisUrl());
  td.add(() => sub.disconnect());
  await sub.subscribe(k.cancelMarks);
  const heard: string[] = [];
  sub.on('message', (channel: string, message: string) => void (channel === k.cancelMarks && heard.push(message)));

  // Never seen: marked with the TTL asked for.
  const unseen = uniqueName('c');
  expect(await store.cancel(unseen, 60_000)).toEqual({ outcome: 'marked', worker: undefined });
  // Queued (a caller marked it): marked with what its record has left.
  const queued = uniqueName('c');
  expect(await store.markQueued(queued, encodeMeta({ service: 'svc', method: 'work', deadline, rid: '8' }), 40_000)).toBe(true);
  expect(await store.cancel(queued, 60_000)).toEqual({ outcome: 'marked', worker: undefined });
  await waitFor(() => heard.length === 2, { message: 'both marks published' });
  expect(heard[0]).toBe(`60000 ${unseen}`);
  const [ttl, id] = (heard[1] as string).split(' ');
  expect(id).toBe(queued);
  expect(Number(ttl)).toBeGreaterThan(35_000);
  expect(Number(ttl)).toBeLessThanOrEqual(40_000);

  for (const callId of [unseen, queued]) {
    const owner = args({ takeover: false, running: true });
    expect(await store.claim(callId, owner)).toEqual({ kind: 'cancelled' });
    // Running, with the cancel asked for: its owner's finish stores what the run came to.
    expect(toCallStatus(callId, await store.record(callId), Date.now())).toMatchObject({ state: 'running', worker: 'w1', attempt: 1, cancelRequested: true });
    expect(await store.renew(callId, owner.token, 5000)).toBe(1);
    expect(await store.finish(callId, { state: 'done', result: result(3), ttlMs: 30_000, code: '' })).toBe(1);
    expect(toCallStatus(callId, await store.record(callId), Date.now())).toMatchObject({ state: 'done', cancelRequested: true, response: { result: 3 } });
  }
});

it('indexes every cancel mark until it expires, and a worker that subscribes later is told the live ones before it counts as listening', async () => {
  const made = uniqueName('c');
  expect(await store.cancel(made, 60_000)).toEqual({ outcome: 'marked', worker: undefined });
  // A queued call whose record outlives the mark's TTL: indexed as long as its record.
  const queued = uniqueName('c');
  expect(await store.markQueued(queued, encodeMeta({ service: 'svc', method: 'work', deadline, rid: '9' }), 120_000)).toBe(true);
  expect(await store.cancel(queued, 60_000)).toMatchObject({ outcome: 'marked' });
  const short = uniqueName('c');
  await store.cancel(short, 1000);
  const scores = async (): Promise<Record<string, number>> => {
    const flat = await tp.redis.zrange(k.cancelMarkIndex, '0', '-1', 'WITHSCORES');
    return Object.fromEntries(flat.flatMap((v, i) => (i % 2 === 0 ? [[v, Number(flat[i + 1])]] : [])));
  };
  const now = Date.now();
  const index = await scores();
  expect(index[made]).toBeGreaterThan(now + 55_000);
  expect(index[queued]).toBeGreaterThan(now + 110_000);
  expect(await tp.redis.pttl(k.cancelMarkIndex)).toBeGreaterThan(110_000);
  // A cancel that found the call running is indexed too (harmless: it only makes a first delivery wait).
  const running = uniqueName('c');
  await store.claim(running, args());
  expect(await store.cancel(running, 60_000)).toMatchObject({ outcome: 'signalled' });

  await new Promise((resolve) => setTimeout(resolve, 1100));
  const late = new RedisStore(redisUrl(), 1000, k, silentLogger());
  td.add(() => late.close());
  const heard = new Map<string, number | undefined>();
  late.subscribeCancels(uniqueName('w'), (callId, ttl) => heard.set(callId, ttl), 100);
  expect(late.listening).toBe(false);
  await waitFor(() => late.listening, { message: 'subscribed and read back' });
  expect(heard.get(made)).toBeGreaterThan(50_000);
  expect(heard.get(queued)).toBeGreaterThan(100_000);
  expect(heard.has(running)).toBe(true);
  expect(heard.has(short)).toBe(false); // expired
  // The next mark drops the expired entries from the index.
  await store.cancel(uniqueName('c'), 60_000);
  expect(Object.keys(await scores())).not.toContain(short);

  // At most `maxMarks`, longest-lived first.
  const few = new RedisStore(redisUrl(), 1000, k, silentLogger());
  td.add(() => few.close());
  const first: string[] = [];
  few.subscribeCancels(uniqueName('w'), (callId) => first.push(callId), 1);
  await waitFor(() => few.listening, { message: 'subscribed and read back' });
  expect(first).toEqual([queued]);
});

it('heartbeats list live workers and drop the ones that stopped; goodbye removes one at once', async () => {
  const entry = (instanceId: string, inflight: number): Parameters<RedisStore['heartbeat']>[2] => ({ service: 'svc', instanceId, inflight, calls: [], startedAt: Date.now(), heartbeatMs: 100 });
  await store.heartbeat('svc', 'a', entry('a', 2), 60_000, 60_000);
  await store.heartbeat('svc', 'b', entry('b', 0), 60_000, 60_000);
  await store.heartbeat('svc', 'gone', entry('gone', 0), 1, 60_000);
  // An entry not renewed within its TTL (1 ms here) stops counting as live.
  await waitFor(async () => (await store.workers()).workers.length === 2);
  const { workers } = await store.workers();
  expect(workers.map((w) => [w.instanceId, w.inflight]).sort()).toEqual([['a', 2], ['b', 0]]);
  await store.goodbye('svc', 'b');
  expect((await store.workers()).workers.map((w) => w.instanceId)).toEqual(['a']);
  // The next beat prunes the expired entry for good.
  await store.heartbeat('svc', 'a', entry('a', 1), 60_000, 60_000);
  expect(await tp.redis.hkeys(k.workers)).toEqual(['svc/a']);
});

it('left no key without a TTL', async () => {
  expect(await tp.keys()).not.toHaveLength(0);
  expect(await tp.keysWithoutTtl()).toEqual([]);
});
