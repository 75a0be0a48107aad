// Schedules a service defines in code (docs/scheduling.md, "Schedules in code"): checked when the
// service starts, with an error naming the schedule and field; carried by its announcement, which
// a registry reads back field for field, and which older and newer senders still get through.
import { parseAnnouncement } from '../src/discovery/announcement';
import { describeInstance } from '../src/runtime/describe';
import { resolveServiceOptions } from '../src/runtime/service-options';
import type { ScheduleDeclaration } from '../src/wire/schedule-declaration';

const ok: ScheduleDeclaration = { name: 'nightly', method: 'reports.build', params: { full: true }, cron: '0 2 * * *', timezone: 'Europe/Berlin', catchUp: 'last' };
const start = (schedules: readonly unknown[]) => () => resolveServiceOptions({ name: 'reports', schedules: schedules as ScheduleDeclaration[] });

describe('checked when the service starts', () => {
  it.each([
    ['a cron croner cannot read', { name: 'a', method: 'm', cron: 'every day' }, /schedules\[0\] \(a\)\.cron is not a cron expression/],
    ['both cron and everyMs', { name: 'a', method: 'm', cron: '* * * * *', everyMs: 5000 }, /\.cron give exactly one of cron and everyMs/],
    ['neither', { name: 'a', method: 'm' }, /\.cron give exactly one/],
    ['a time zone that is not IANA', { name: 'a', method: 'm', cron: '* * * * *', timezone: 'Mars/Olympus' }, /\.timezone is not an IANA time zone/],
    ['a time zone with an interval', { name: 'a', method: 'm', everyMs: 5000, timezone: 'UTC' }, /\.timezone only with cron/],
    ['an interval under a second', { name: 'a', method: 'm', everyMs: 10 }, /\.everyMs must be >= 1000/],
    ['no method', { name: 'a', everyMs: 5000 }, /\.method must have required property 'method'/],
    ['a bad name', { name: 'a b', method: 'm', everyMs: 5000 }, /\.name must match pattern/],
    ['an unknown overlap', { name: 'a', method: 'm', everyMs: 5000, overlap: 'sometimes' }, /\.overlap must be equal to one of the allowed values/],
    ['catchUpMax without catchUp all', { name: 'a', method: 'm', everyMs: 5000, catchUpMax: 3 }, /\.catchUpMax only with catchUp: 'all'/],
  ])('refuses %s, naming the field', (_what, schedule, message) => {
    expect(start([schedule])).toThrow(TypeError);
    expect(start([schedule])).toThrow(message);
  });

  it('refuses one name given twice', () => {
    expect(start([ok, { ...ok, cron: '0 3 * * *' }])).toThrow(/schedules\[1\] \(nightly\)\.name is given twice/);
  });

  it('takes good ones, keeping only the known fields', () => {
    const resolved = resolveServiceOptions({ name: 'reports', schedules: [ok, { name: 'often', method: 'm', everyMs: 60_000, extra: 1 } as ScheduleDeclaration] });
    expect(resolved.schedules).toEqual([ok, { name: 'often', method: 'm', everyMs: 60_000 }]);
  });
});

describe('carried by the announcement', () => {
  const announce = (schedules?: readonly ScheduleDeclaration[]) => describeInstance(resolveServiceOptions({ name: 'reports', instanceId: 'i1', ...(schedules ? { schedules } : {}) }), 1, 0);

  it('round-trips through the wire and the schema', () => {
    const sent = announce([ok, { name: 'often', method: 'm', everyMs: 60_000, overlap: 'allow', timeoutMs: 5000 }]);
    const read = parseAnnouncement(Buffer.from(JSON.stringify(sent)));
    expect(read).toEqual({ ok: true, announcement: sent });
    expect(read.ok && read.announcement.type === 'announce' && read.announcement.schedules).toEqual(sent.schedules);
  });

  it('is absent when the service defines none, as from an older instance', () => {
    const sent = announce();
    expect(sent).not.toHaveProperty('schedules');
    const read = parseAnnouncement(Buffer.from(JSON.stringify(sent)));
    expect(read.ok && read.announcement).not.toHaveProperty('schedules');
  });

  it('ignores fields a newer sender adds; drops an announcement whose schedule breaks the schema', () => {
    const sent = { ...announce(), schedules: [{ ...ok, jitterMs: 5 }] };
    const read = parseAnnouncement(Buffer.from(JSON.stringify(sent)));
    expect(read.ok && read.announcement.type === 'announce' && read.announcement.schedules).toEqual([ok]);
    const broken = parseAnnouncement(Buffer.from(JSON.stringify({ ...announce(), schedules: [{ name: 'x', method: 'm', everyMs: 5 }] })));
    expect(broken).toMatchObject({ ok: false, reason: 'schema' });
  });
});
