// The outcome history over the in-memory store (embedded mode): each finished call lands once, in the
// stream of its kind; failures outlive a burst of successes past the success bound; filters and pages.
import { ErrorCode } from '@warren/jsonrpc';
import { encodeMeta } from '../src/record-codec';
import { memoryInflightView } from '../src/memory';
import { connectMemory, type MemoryInflightHandle } from '../src/memory-handle';
import { MemoryInflightStore } from '../src/memory-store';
import type { ClaimArgs } from '../src/store-port';

const deadline = Date.now() + 600_000;
const args = (method: string, worker = 'w1'): ClaimArgs => ({
  token: `t-${worker}`, worker, meta: encodeMeta({ service: 'svc', method, deadline, rid: '1' }), attempt: 1, leaseMs: 5000, runningTtlMs: 20_000, maxAttempts: 3, finishedTtlMs: 30_000, workerLostCode: ErrorCode.WorkerLost, takeover: false,
});
const ok = JSON.stringify({ jsonrpc: '2.0', result: 42, id: 1 });
const failure = (code: number, message: string): string => JSON.stringify({ jsonrpc: '2.0', error: { code, message, data: { why: 'test' } }, id: 1 });

async function run(store: MemoryInflightHandle, callId: string, method: string, outcome: 'done' | 'failed', code = -32000, worker = 'w1'): Promise<number> {
  await store.claim(callId, args(method, worker));
  return outcome === 'done'
    ? store.finish(callId, { state: 'done', result: ok, ttlMs: 30_000, code: '' })
    : store.finish(callId, { state: 'failed', result: failure(code, 'boom'), ttlMs: 30_000, code: String(code) });
}

it('keeps failures past a burst of successes beyond the success bound, newest first', async () => {
  const memory = new MemoryInflightStore({ history: { done: { entries: 10, ageMs: 3_600_000 }, failed: { entries: 100, ageMs: 3_600_000 } } });
  const store = connectMemory(memory);
  const view = memoryInflightView(memory);
  for (let i = 0; i < 3; i++) await run(store, `f${i}`, 'work', 'failed');
  for (let i = 0; i < 50; i++) await run(store, `s${i}`, 'work', 'done');
  const all = await view.history({ limit: 500 });
  expect(all.items.filter((c) => c.state === 'done')).toHaveLength(10);
  expect(all.items.filter((c) => c.state === 'failed').map((c) => c.callId).sort()).toEqual(['f0', 'f1', 'f2']);
  expect(all.items[0]?.callId).toBe('s49');
  expect(all.items.find((c) => c.callId === 'f1')).toMatchObject({ method: 'work', service: 'svc', worker: 'w1', attempt: 1, code: -32000, error: { code: -32000, message: 'boom', data: { why: 'test' } } });
});

it('records a call once, however many finish it', async () => {
  const memory = new MemoryInflightStore();
  const store = connectMemory(memory);
  expect(await run(store, 'c', 'work', 'done')).toBe(1);
  expect(await store.finish('c', { state: 'failed', result: failure(-32000, 'late'), ttlMs: 30_000, code: '-32000' })).toBe(0);
  const page = await memoryInflightView(memory).history();
  expect(page.items.map((c) => [c.callId, c.state])).toEqual([['c', 'done']]);
});

it('filters by method, worker, code, state and time, and pages with next', async () => {
  const memory = new MemoryInflightStore();
  const store = connectMemory(memory);
  const view = memoryInflightView(memory);
  await run(store, 'a', 'alpha', 'failed', -32001, 'w1');
  await run(store, 'b', 'beta', 'failed', -32003, 'w2');
  await run(store, 'c', 'alpha', 'done', 0, 'w2');
  const ids = async (q: Parameters<typeof view.history>[0]): Promise<string[]> => (await view.history(q)).items.map((c) => c.callId);
  expect(await ids({ method: 'alpha' })).toEqual(['c', 'a']);
  expect(await ids({ worker: 'w2' })).toEqual(['c', 'b']);
  expect(await ids({ code: -32003 })).toEqual(['b']);
  expect(await ids({ state: 'failures' })).toEqual(['b', 'a']);
  expect(await ids({ state: 'done' })).toEqual(['c']);
  expect(await ids({ since: Date.now() + 60_000 })).toEqual([]);
  expect(await ids({ until: Date.now() - 60_000 })).toEqual([]);
  const first = await view.history({ limit: 2 });
  expect(first.items.map((c) => c.callId)).toEqual(['c', 'b']);
  expect(first.next).toBeDefined();
  const second = await view.history({ limit: 2, ...(first.next === undefined ? {} : { before: first.next }) });
  expect(second.items.map((c) => c.callId)).toEqual(['a']);
  expect(second.next).toBeUndefined();
});

it('tells one call from its record while it lives, and from the history once the record is gone', async () => {
  let now = Date.now();
  jest.spyOn(Date, 'now').mockImplementation(() => now);
  try {
    const memory = new MemoryInflightStore();
    const store = connectMemory(memory);
    const view = memoryInflightView(memory);
    await store.claim('c', args('work'));
    expect(await view.call('c')).toMatchObject({ state: 'running', worker: 'w1', method: 'work' });
    await store.finish('c', { state: 'failed', result: failure(-32000, 'boom'), ttlMs: 1000, code: '-32000' });
    expect(await view.call('c')).toMatchObject({ state: 'failed', response: { error: { message: 'boom' } }, history: { code: -32000 } });
    now += 5000;
    expect(await view.call('c')).toMatchObject({ state: 'failed', method: 'work', error: { message: 'boom' }, history: { callId: 'c' } });
    expect(await view.call('nope')).toMatchObject({ state: 'unknown' });
  } finally {
    jest.restoreAllMocks();
  }
});

it("keeps a call's earlier attempts in memory as the claim script does in Redis", async () => {
  let now = Date.now();
  jest.spyOn(Date, 'now').mockImplementation(() => now);
  try {
    const memory = new MemoryInflightStore();
    const store = connectMemory(memory);
    await store.claim('c', { ...args('work', 'w1'), takeover: true });
    now += 6000;
    expect(await store.claim('c', { ...args('work', 'w2'), takeover: true })).toMatchObject({ kind: 'run', attempt: 2, previousOwner: 'w1' });
    expect(await store.release('c', 't-w2')).toBe(1);
    expect(await store.claim('c', args('work', 'w3'))).toMatchObject({ kind: 'run', attempt: 3 });
    const detail = await memoryInflightView(memory).call('c');
    expect(detail.attempts.map((a) => [a.attempt, a.worker, a.outcome])).toEqual([[1, 'w1', 'lost'], [2, 'w2', 'released']]);
  } finally {
    jest.restoreAllMocks();
  }
});

it('adds a call the claim ends itself (WorkerLost) to the failures, as the claim script does', async () => {
  let now = Date.now();
  jest.spyOn(Date, 'now').mockImplementation(() => now);
  try {
    const memory = new MemoryInflightStore();
    const store = connectMemory(memory);
    await store.claim('c', { ...args('work', 'w1'), maxAttempts: 1 });
    now += 6000;
    expect(await store.claim('c', { ...args('work', 'w2'), maxAttempts: 1, takeover: true })).toMatchObject({ kind: 'dead' });
    const page = await memoryInflightView(memory).history();
    expect(page.items.map((c) => [c.callId, c.state, c.code, c.worker])).toEqual([['c', 'failed', ErrorCode.WorkerLost, 'w1']]);
  } finally {
    jest.restoreAllMocks();
  }
});
