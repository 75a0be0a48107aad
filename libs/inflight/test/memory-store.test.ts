// The memory store's time-dependent paths (the differential test against Redis keeps leases long):
// a lease running out, takeover only in isolation, dead-lettering, TTL expiry, worker liveness,
// the cancel channel, and InflightView over it.
import { ErrorCode } from '@warren/jsonrpc';
import { encodeMeta } from '../src/record-codec';
import { connectMemory } from '../src/memory-handle';
import { MemoryInflightStore } from '../src/memory-store';
import { memoryInflightView } from '../src/memory';
import type { ClaimArgs } from '../src/store-port';

const deadline = Date.now() + 60_000;
const meta = encodeMeta({ service: 'svc', method: 'work', deadline, rid: '7' });
const args = (over: Partial<ClaimArgs> = {}): ClaimArgs => ({
  token: 't1', worker: 'w1', meta, attempt: 1, leaseMs: 5000, runningTtlMs: 20_000, maxAttempts: 2, finishedTtlMs: 30_000, workerLostCode: ErrorCode.WorkerLost, takeover: false, ...over,
});

let now = 1_000_000;
beforeEach(() => {
  now = 1_000_000;
  jest.spyOn(Date, 'now').mockImplementation(() => now);
});
afterEach(() => jest.restoreAllMocks());

it('lets a suspect be taken over only in isolation, then dead-letters it past maxAttempts', async () => {
  const store = connectMemory(new MemoryInflightStore());
  expect(await store.claim('c', args())).toEqual({ kind: 'run', attempt: 1, previousOwner: undefined });
  expect(await store.claim('c', args({ worker: 'w2', token: 't2' }))).toEqual({ kind: 'busy', owner: 'w1', leaseLeftMs: 5000 });
  now += 5001;
  expect(await store.claim('c', args({ worker: 'w2', token: 't2' }))).toEqual({ kind: 'expired', lastOwner: 'w1', attempts: 1 });
  expect(await store.renew('c', 't1', 5000)).toBe(0);
  now += 5001;
  expect(await store.claim('c', args({ worker: 'w2', token: 't2', takeover: true }))).toEqual({ kind: 'run', attempt: 2, previousOwner: 'w1' });
  expect(await store.renew('c', 't1', 5000)).toBe(-1);
  now += 5001;
  expect(await store.claim('c', args({ worker: 'w3', token: 't3', takeover: true }))).toEqual({ kind: 'dead', attempts: 2, lastOwner: 'w2' });
  expect(await store.record('c')).toMatchObject({ state: 'failed', code: String(ErrorCode.WorkerLost) });
});

it('forgets a record, its progress and its effects when their TTL runs out', async () => {
  const store = connectMemory(new MemoryInflightStore());
  await store.claim('c', args({ runningTtlMs: 2000 }));
  expect(await store.progress('c', 't1', '{"fraction":0.5,"at":1}', 60_000)).toBe(1);
  expect(await store.effectStart('c', 'e', 'Pt1', 1500)).toBe('R');
  expect(await store.record('c')).toMatchObject({ state: 'running', progress: '{"fraction":0.5,"at":1}' });
  now += 1600;
  expect(await store.effectStart('c', 'e', 'Pt9', 1500)).toBe('R');
  now += 500;
  expect(await store.record('c')).toEqual({});
  expect(await store.claim('c', args({ worker: 'w2' }))).toEqual({ kind: 'run', attempt: 1, previousOwner: undefined });
});

it('lists a worker while it beats, drops it three beats after the last, and at once on goodbye', async () => {
  const store = connectMemory(new MemoryInflightStore());
  const entry = { service: 'svc', instanceId: 'i1', inflight: 0, calls: [], startedAt: now, heartbeatMs: 1000 };
  await store.heartbeat('svc', 'i1', entry, 3000, 60_000);
  await store.heartbeat('svc', 'i2', { ...entry, instanceId: 'i2' }, 3000, 60_000);
  expect((await store.workers()).workers.map((w) => w.instanceId)).toEqual(['i1', 'i2']);
  await store.goodbye('svc', 'i2');
  expect((await store.workers()).workers.map((w) => w.instanceId)).toEqual(['i1']);
  now += 3001;
  expect((await store.workers()).workers).toEqual([]);
});

it('signals a running call\'s worker through its cancel subscription, which closing the handle drops', async () => {
  const memory = new MemoryInflightStore();
  const worker = connectMemory(memory);
  const heard: string[] = [];
  worker.subscribeCancels('w1', (id) => heard.push(id), 100);
  await worker.claim('c', args());
  const view = memoryInflightView(memory);
  expect(await view.cancel('c')).toEqual({ outcome: 'signalled', worker: 'w1' });
  await Promise.resolve();
  expect(heard).toEqual(['c']);
  expect(await worker.renew('c', 't1', 5000)).toBe(1);
  await worker.close();
  await worker.claim('d', args({ token: 't4' }));
  expect(await connectMemory(memory).cancel('d', 1000)).toMatchObject({ outcome: 'signalled', receivers: 0 });
  await view.close();
});

it('tells a worker that subscribes the cancel marks still alive, longest-lived first, at most as many as it asks for', async () => {
  const memory = new MemoryInflightStore();
  const view = connectMemory(memory);
  expect(await view.cancel('short', 1000)).toMatchObject({ outcome: 'marked' });
  expect(await view.cancel('long', 9000)).toMatchObject({ outcome: 'marked' });
  expect(await view.cancel('mid', 5000)).toMatchObject({ outcome: 'marked' });
  expect(await view.cancel('gone', 500)).toMatchObject({ outcome: 'marked' });
  now += 600;
  const heard: [string, number | undefined][] = [];
  connectMemory(memory).subscribeCancels('w1', (id, ttl) => heard.push([id, ttl]), 2);
  expect(heard).toEqual([['long', 8400], ['mid', 4400]]);
  const all: string[] = [];
  connectMemory(memory).subscribeCancels('w2', (id) => all.push(id), 10);
  expect(all).toEqual(['long', 'mid', 'short']);
});

it('serves InflightView: a call marked queued, then running in a live worker\'s list, then done', async () => {
  const memory = new MemoryInflightStore();
  const worker = connectMemory(memory);
  const view = memoryInflightView(memory, { keyPrefix: 'embedded' });
  expect(await view.markQueued({ callId: 'c', method: 'work', id: 7, deadline, service: 'svc' })).toBe(true);
  expect(await view.status('c')).toMatchObject({ state: 'queued', attempt: 0 });
  expect(await view.list()).toEqual([expect.objectContaining({ callId: 'c', state: 'queued', method: 'work', service: 'svc', worker: '', attempt: 0 })]);
  expect(await worker.claim('c', args())).toEqual({ kind: 'run', attempt: 1, previousOwner: undefined, fromQueue: true });
  await worker.heartbeat('svc', 'w1', { service: 'svc', instanceId: 'w1', inflight: 1, calls: ['c'], startedAt: now, heartbeatMs: 1000 }, 3000, 60_000);
  expect(await view.list()).toEqual([expect.objectContaining({ callId: 'c', method: 'work', worker: 'w1', attempt: 1 })]);
  await worker.finish('c', { state: 'done', result: '{"jsonrpc":"2.0","result":9,"id":7}', ttlMs: 30_000, code: '' });
  expect(await view.result('c')).toEqual({ jsonrpc: '2.0', result: 9, id: 7 });
  expect(await view.list()).toEqual([]);
  await view.close();
});
