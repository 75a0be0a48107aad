// Cron occurrences in a time zone, across both DST changes (docs/scheduling.md "Time zones and DST"):
// croner with Vixie cron's rules, pinned here so an upgrade that changes them fails.
import { nextOccurrence, occurrencesBetween, parseSchedule, type Timing } from '../src/index';

const cron = (expr: string, timezone: string): Timing => ({ kind: 'cron', cron: expr, timezone });
const iso = (t: number | undefined): string | undefined => (t === undefined ? undefined : new Date(t).toISOString());
const at = (s: string): number => Date.parse(s);

describe('time zones', () => {
  it('fires a daily cron at the wall-clock time of its zone, whatever its UTC offset that day', () => {
    const nine = cron('0 9 * * *', 'America/New_York');
    expect(iso(nextOccurrence(nine, at('2026-03-07T12:00:00Z')))).toBe('2026-03-07T14:00:00.000Z'); // EST, UTC-5
    expect(iso(nextOccurrence(nine, at('2026-03-08T12:00:00Z')))).toBe('2026-03-08T13:00:00.000Z'); // EDT, UTC-4
    expect(iso(nextOccurrence(cron('0 9 * * *', 'Asia/Tokyo'), at('2026-03-07T12:00:00Z')))).toBe('2026-03-08T00:00:00.000Z');
  });

  it('reads UTC when the schedule names no zone', () => {
    const parsed = parseSchedule({ name: 'n', method: 'm', cron: '30 2 * * *' }, 0, 'runtime');
    expect(parsed.ok && parsed.schedule.timing).toEqual({ kind: 'cron', cron: '30 2 * * *', timezone: 'UTC' });
  });
});

describe('DST in Europe/Berlin (spring forward 2026-03-29 02:00→03:00, fall back 2026-10-25 03:00→02:00)', () => {
  it('a fixed time inside the skipped hour fires once, at the first valid time after the gap (03:00 CEST)', () => {
    const t = cron('30 2 * * *', 'Europe/Berlin');
    const { times } = occurrencesBetween(t, at('2026-03-28T12:00:00Z'), at('2026-03-30T12:00:00Z'), 10);
    expect(times.map(iso)).toEqual(['2026-03-29T01:00:00.000Z', '2026-03-30T00:30:00.000Z']);
  });

  it('a fixed time inside the repeated hour fires once, at its first pass (02:30 CEST)', () => {
    const t = cron('30 2 * * *', 'Europe/Berlin');
    const { times } = occurrencesBetween(t, at('2026-10-24T12:00:00Z'), at('2026-10-26T12:00:00Z'), 10);
    expect(times.map(iso)).toEqual(['2026-10-25T00:30:00.000Z', '2026-10-26T01:30:00.000Z']);
  });

  it('a step expression fires in both passes of the repeated hour (every real half hour)', () => {
    const t = cron('*/30 * * * *', 'Europe/Berlin');
    const { times } = occurrencesBetween(t, at('2026-10-25T00:00:00Z'), at('2026-10-25T02:00:00Z'), 10);
    // 02:30 CEST, 02:00 CET, 02:30 CET, 03:00 CET ... : four occurrences in two UTC hours, none lost, none doubled.
    expect(times.map(iso)).toEqual(['2026-10-25T00:30:00.000Z', '2026-10-25T01:00:00.000Z', '2026-10-25T01:30:00.000Z', '2026-10-25T02:00:00.000Z']);
  });

  it('an hourly expression has 23 occurrences on the spring day and 25 on the autumn day', () => {
    const hourly = cron('0 * * * *', 'Europe/Berlin');
    const day = (from: string, to: string): number => occurrencesBetween(hourly, at(from) - 1, at(to) - 1, 100).times.length;
    expect(day('2026-03-28T23:00:00Z', '2026-03-29T22:00:00Z')).toBe(23);
    expect(day('2026-10-24T22:00:00Z', '2026-10-25T23:00:00Z')).toBe(25);
  });
});

describe('intervals', () => {
  it('fall on anchor + k × every, whatever the time zone or DST', () => {
    const every = { kind: 'interval', everyMs: 1000, anchor: 500 } as const;
    expect(nextOccurrence(every, 0)).toBe(1500);
    expect(nextOccurrence(every, 1500)).toBe(2500);
    expect(occurrencesBetween(every, 1500, 5000, 2)).toEqual({ times: [2500, 3500], more: true });
  });
});

describe('parseSchedule', () => {
  it.each([
    [{ name: 'n', method: 'm' }, 'cron'],
    [{ name: 'n', method: 'm', cron: '* * * * *', everyMs: 1000 }, 'cron'],
    [{ name: 'n', method: 'm', cron: '61 * * * *' }, 'cron'],
    [{ name: 'n', method: 'm', cron: '* * * * *', timezone: 'Mars/Olympus' }, 'timezone'],
    [{ name: 'n', method: 'm', everyMs: 10 }, 'everyMs'],
    [{ name: 'n', method: 'm', everyMs: 1000, timezone: 'UTC' }, 'timezone'],
    [{ name: 'n', method: 'm', everyMs: 1000, catchUpMax: 3 }, 'catchUpMax'],
    [{ name: 'bad name', method: 'm', everyMs: 1000 }, 'name'],
  ])('refuses %j, naming %s', (input, field) => {
    const parsed = parseSchedule(input, 0, 'runtime');
    expect(parsed.ok ? undefined : parsed.field).toBe(field);
  });
});
