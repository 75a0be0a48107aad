// The policies as a pure decision (plan.ts): catch-up after downtime and overlap while running.
import { parseSchedule, planOccurrences, type Schedule, type ScheduleInput } from '../src/index';

function schedule(extra: Partial<ScheduleInput>): Schedule {
  const parsed = parseSchedule({ name: 's', method: 'm', everyMs: 1000, ...extra }, 0, 'runtime');
  if (!parsed.ok) throw new Error(parsed.reason);
  return parsed.schedule;
}

const grace = 1500;

describe('catch-up after downtime (occurrences at 1000, 2000, ... ; now 10000; grace 1500)', () => {
  it('none: fires the on-time ones only, the rest are missed', () => {
    const p = planOccurrences(schedule({}), {}, 10_000, grace, false);
    expect(p).toMatchObject({ fire: [9000], missed: 8, through: 10_000 });
    // 10000 is due too, but a call is running by then: skipped under the default policy.
    expect(p.skip).toEqual([10_000]);
  });

  it('last: fires the newest missed one too', () => {
    const p = planOccurrences(schedule({ catchUp: 'last', overlap: 'allow' }), {}, 10_000, grace, false);
    expect(p).toMatchObject({ fire: [8000, 9000, 10_000], missed: 7 });
  });

  it('all up to N: fires the newest N missed ones', () => {
    const p = planOccurrences(schedule({ catchUp: 'all', catchUpMax: 3, overlap: 'allow' }), {}, 10_000, grace, false);
    expect(p).toMatchObject({ fire: [6000, 7000, 8000, 9000, 10_000], missed: 5 });
  });

  it('goes on after the last occurrence handled, never before', () => {
    const p = planOccurrences(schedule({ overlap: 'allow' }), { lastOccurrence: 9000 }, 10_000, grace, false);
    expect(p).toMatchObject({ fire: [10_000], missed: 0, through: 10_000 });
    expect(planOccurrences(schedule({}), { lastOccurrence: 10_000 }, 10_500, grace, false)).toMatchObject({ fire: [], through: undefined });
  });

  it('counts a long downtime without listing it (a day of a 1-second schedule)', () => {
    const p = planOccurrences(schedule({ catchUp: 'last' }), {}, 86_400_000, grace, false);
    expect(p.missed).toBe(86_400 - 3); // 86 398 late, the newest of them caught up
    expect(p.fire).toEqual([86_398_000]);
  });
});

describe('overlap while a call of the schedule runs', () => {
  const state = { lastOccurrence: 7000 };
  it('skip: nothing fires, every due occurrence is skipped', () => {
    expect(planOccurrences(schedule({ overlap: 'skip' }), state, 9000, grace, true)).toMatchObject({ fire: [], skip: [8000, 9000] });
  });
  it('queue: one waits (the catch-up count with catchUp all), the rest are skipped; it fires first once the call ends', () => {
    const running = planOccurrences(schedule({ overlap: 'queue' }), state, 9000, grace, true);
    expect(running).toMatchObject({ fire: [], queue: [8000], skip: [9000] });
    const after = planOccurrences(schedule({ overlap: 'queue' }), { lastOccurrence: 9000, queued: [8000] }, 9100, grace, false);
    expect(after).toMatchObject({ fire: [8000], queue: [], skip: [] });
    expect(planOccurrences(schedule({ overlap: 'queue', catchUp: 'all', catchUpMax: 2 }), state, 9000, grace, true)).toMatchObject({ queue: [8000, 9000] });
  });
  it('allow: every due occurrence fires', () => {
    expect(planOccurrences(schedule({ overlap: 'allow' }), state, 9000, grace, true)).toMatchObject({ fire: [8000, 9000], skip: [] });
  });
});
