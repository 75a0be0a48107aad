// Schedules against the real RabbitMQ and Redis (docs/scheduling.md "Schedules"): each overlap
// policy on a 1-second schedule whose call outlasts the second, each catch-up policy after a
// downtime, and one firing per occurrence when two schedulers share the store, including an
// occurrence claimed by a holder that died before firing it. The long race with kills is the
// late tier's (test/soak/schedules.test.ts).
import { waitFor } from '@warren/testkit';
import { parseSchedule, type Schedule, type ScheduleInput, type ScheduleState } from '../src';
import { ScheduleBed } from './support';

const bed = new ScheduleBed();
beforeAll(() => bed.start());
afterAll(() => bed.close());
beforeEach(() => bed.fresh());

let n = 0;
/** A schedule of `tick` (its calls counted under the schedule's name: `bed.ticks(name)`). */
async function add(input: Partial<ScheduleInput> & { createdAt?: number; ms?: number }): Promise<Schedule> {
  const { createdAt, ms, ...rest } = input;
  const name = `s${++n}`;
  const parsed = parseSchedule({ name, method: 'tick', everyMs: 1000, params: { tag: name, ms: ms ?? 0 }, ...rest }, createdAt ?? Date.now(), 'runtime');
  if (!parsed.ok) throw new Error(parsed.reason);
  await bed.store().put(parsed.schedule, false);
  return parsed.schedule;
}

const fired = async (name: string): Promise<number[]> => [...(await bed.occurrences(name))].filter(([, v]) => v === 'fired').map(([t]) => t);

describe('overlap', () => {
  it('skip: an occurrence due while the call runs is skipped; calls never overlap', async () => {
    const s = await add({ overlap: 'skip', ms: 2500 });
    const ticks = bed.ticks(s.name);
    const scheduler = bed.scheduler();
    scheduler.start();
    await waitFor(() => ticks.ends.length >= 2, { timeoutMs: 20_000, message: 'two calls done' });
    await scheduler.close();
    expect(ticks.maxRunning).toBe(1);
    expect(scheduler.stats().get(s.name)?.skipped).toBeGreaterThanOrEqual(2);
    expect([...(await bed.occurrences(s.name)).values()]).toContain('skipped');
  });

  it('queue: an occurrence due while the call runs waits and fires when it ends; calls never overlap', async () => {
    const s = await add({ overlap: 'queue', ms: 1500 });
    const ticks = bed.ticks(s.name);
    const scheduler = bed.scheduler();
    const runs: { occurrence: number; at: number }[] = [];
    const store = bed.store();
    scheduler.start();
    // The state's last run, read while calls run: a queued occurrence fires at least 500 ms after it was due.
    await waitFor(async () => {
      const last = (await store.states([s.name])).get(s.name)?.lastRun;
      if (last?.occurrence !== undefined && !runs.some((r) => r.occurrence === last.occurrence)) runs.push({ occurrence: last.occurrence, at: last.at });
      return runs.length >= 3;
    }, { timeoutMs: 20_000, intervalMs: 50, message: 'three runs' });
    await scheduler.close();
    expect(ticks.maxRunning).toBe(1);
    expect(runs.some((r) => r.at - r.occurrence >= 450)).toBe(true);
  });

  it('allow: every occurrence fires, calls run side by side', async () => {
    const s = await add({ overlap: 'allow', ms: 2500 });
    const ticks = bed.ticks(s.name);
    const scheduler = bed.scheduler();
    scheduler.start();
    await waitFor(() => ticks.maxRunning >= 2, { timeoutMs: 20_000, message: 'two calls at once' });
    await scheduler.close();
    expect(scheduler.stats().get(s.name)?.skipped ?? 0).toBe(0);
  });
});

describe('catch-up after downtime', () => {
  // Added 10.5 s before any scheduler runs: occurrences at T0 - 9.5 s ... T0 - 0.5 s, T0 + 0.5 s.
  // With a 1.5 s grace, the nine up to T0 - 1.5 s are late; T0 - 0.5 s is on time.
  it.each([
    ['none', {}, 0, 9],
    ['last', { catchUp: 'last' as const }, 1, 8],
    ['all up to 3', { catchUp: 'all' as const, catchUpMax: 3 }, 3, 6],
  ])('%s', async (_label, policy, caughtUp, missed) => {
    const t0 = Date.now();
    const s = await add({ ...policy, overlap: 'allow', createdAt: t0 - 10_500 });
    const scheduler = bed.scheduler({ graceMs: 1500 });
    scheduler.start();
    await waitFor(async () => (await fired(s.name)).some((t) => t > t0 - 1000), { timeoutMs: 10_000, message: 'the on-time occurrence fired' });
    await scheduler.close();
    expect((await fired(s.name)).filter((t) => t < t0 - 1000)).toHaveLength(caughtUp);
    expect(scheduler.stats().get(s.name)?.missed).toBe(missed);
  });
});

describe('one firing per occurrence', () => {
  it('two schedulers on one store: every occurrence fires once; the other takes over when the holder leaves', async () => {
    const s = await add({ overlap: 'allow' });
    const ticks = bed.ticks(s.name);
    const a = bed.scheduler();
    const b = bed.scheduler();
    a.start();
    b.start();
    await waitFor(() => ticks.starts.length >= 3, { timeoutMs: 15_000, message: 'three firings' });
    const [leader, other] = a.leader ? [a, b] : [b, a];
    await leader.close();
    const before = ticks.starts.length;
    await waitFor(() => ticks.starts.length >= before + 3 && other.leader, { timeoutMs: 15_000, message: 'three more firings by the other' });
    await other.close();
    await waitFor(() => ticks.ends.length === ticks.starts.length, { message: 'calls done' });
    const times = await fired(s.name);
    expect(ticks.starts).toHaveLength(times.length);
    // No occurrence between the first and the last was left out.
    for (let i = 1; i < times.length; i++) expect((times[i] as number) - (times[i - 1] as number)).toBe(1000);
  });

  it('an occurrence claimed by a holder that died before firing is fired by the next holder, once', async () => {
    const t0 = Date.now();
    const s = await add({ overlap: 'allow', createdAt: t0 - 1500, paused: false });
    const store = bed.store();
    const occurrence = t0 - 500;
    // The dead holder: took the lease, claimed the occurrence, and never fired it (nor renewed the lease).
    await store.setState(s.name, { lastOccurrence: t0 - 1500 } satisfies ScheduleState);
    expect(await store.lease('dead-holder', 300)).toBe(true);
    expect(await store.claim(s.name, occurrence, 'dead-holder')).toBe('claimed');
    const scheduler = bed.scheduler();
    scheduler.start();
    await waitFor(async () => (await bed.occurrences(s.name)).get(occurrence) === 'fired', { timeoutMs: 10_000, message: 'the claimed occurrence fired' });
    await scheduler.close();
    expect(await store.claim(s.name, occurrence, 'dead-holder')).toBe('not_holder');
    expect((await fired(s.name)).filter((t) => t === occurrence)).toHaveLength(1);
  });
});
