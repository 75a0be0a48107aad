// The delayed-call list over the in-memory store (the Redis scripts do the same; broker/test/delayed.int.test.ts
// runs them): soonest due first, due entries gone, bounded by dropping the latest-due, cancel by id.
import { DelayedCalls } from '../src/delayed';
import { memoryInflightView } from '../src/memory';
import { connectMemory } from '../src/memory-handle';
import { MemoryInflightStore } from '../src/memory-store';

describe('DelayedCalls', () => {
  beforeEach(() => jest.useFakeTimers({ now: 1_700_000_000_000 }));
  afterEach(() => jest.useRealTimers());

  it('lists the calls not yet due, soonest first, with ISO times, and forgets them once due', async () => {
    const view = memoryInflightView(new MemoryInflightStore(), { keyPrefix: 't' });
    const now = Date.now();
    await view.delayed.add({ callId: 'b', method: 'm.two', dueAt: now + 2000, deadline: now + 32_000, service: 'm', principal: '1' });
    await view.delayed.add({ callId: 'a', method: 'm.one', dueAt: now + 1000, deadline: now + 31_000 });
    expect(await view.delayed.list()).toEqual([
      { callId: 'a', service: '', method: 'm.one', dueAt: new Date(now + 1000).toISOString(), createdAt: new Date(now).toISOString(), deadline: new Date(now + 31_000).toISOString() },
      { callId: 'b', service: 'm', method: 'm.two', dueAt: new Date(now + 2000).toISOString(), createdAt: new Date(now).toISOString(), deadline: new Date(now + 32_000).toISOString(), principal: '1' },
    ]);
    expect((await view.delayed.list(1)).map((c) => c.callId)).toEqual(['a']);
    jest.setSystemTime(now + 1500);
    expect((await view.delayed.list()).map((c) => c.callId)).toEqual(['b']);
    await view.close();
  });

  it('keeps at most its bound, dropping the latest due', async () => {
    const store = new MemoryInflightStore();
    const delayed = new DelayedCalls(connectMemory(store), () => Promise.resolve({ outcome: 'marked' }), 1000, 2);
    const now = Date.now();
    for (const [id, ms] of [['late', 9000], ['soon', 1000], ['mid', 5000]] as const) await delayed.add({ callId: id, method: 'm', dueAt: now + ms, deadline: now + ms + 1000 });
    expect((await delayed.list()).map((c) => c.callId)).toEqual(['soon', 'mid']);
  });

  it('cancels by id with the listed deadline, and unlists it', async () => {
    const store = new MemoryInflightStore();
    const asked: [string, { deadline?: number }][] = [];
    const delayed = new DelayedCalls(connectMemory(store), (callId, opts) => (asked.push([callId, opts]), Promise.resolve({ outcome: 'marked' as const })), 1000);
    const now = Date.now();
    await delayed.add({ callId: 'x', method: 'm', dueAt: now + 60_000, deadline: now + 90_000 });
    await expect(delayed.cancel('x')).resolves.toEqual({ outcome: 'marked', listed: true });
    expect(asked).toEqual([['x', { deadline: now + 90_000 }]]);
    expect(await delayed.list()).toEqual([]);
    await expect(delayed.cancel('unknown')).resolves.toEqual({ outcome: 'marked', listed: false });
  });

  it('marks a delayed call cancelled in the store so its worker never runs it', async () => {
    const view = memoryInflightView(new MemoryInflightStore(), { keyPrefix: 't' });
    const now = Date.now();
    await view.delayed.add({ callId: 'y', method: 'm', dueAt: now + 60_000, deadline: now + 90_000 });
    expect((await view.delayed.cancel('y')).listed).toBe(true);
    expect((await view.status('y')).state).toBe('cancelled');
    await view.close();
  });
});
