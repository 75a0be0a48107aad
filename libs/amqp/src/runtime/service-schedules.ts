import Ajv, { type ValidateFunction } from 'ajv';
import { Cron } from 'croner';
import { scheduleDeclarationSchema } from '../wire/protocol-schemas';
import { copyScheduleDeclaration, type ScheduleDeclaration } from '../wire/schedule-declaration';

let validator: ValidateFunction | undefined;

/**
 * Checks the schedules a service defines in code, when it starts, so a typo fails on the
 * developer's machine rather than as a line in a broker's log: the announcement schema, exactly
 * one of `cron` and `everyMs`, a cron expression croner reads, an IANA time zone, unique names.
 * Throws a `TypeError` naming the schedule and the field; answers copies holding the known fields.
 *
 * @example
 * assertServiceSchedules([{ name: 'nightly', method: 'reports.build', cron: '0 2 * * *' }]);
 */
export function assertServiceSchedules(schedules: readonly ScheduleDeclaration[]): readonly ScheduleDeclaration[] {
  validator ??= new Ajv({ strict: true, allErrors: false }).compile(scheduleDeclarationSchema);
  const seen = new Set<string>();
  return schedules.map((s, i) => {
    const where = `ServiceOptions.schedules[${i}]${typeof s?.name === 'string' ? ` (${s.name})` : ''}`;
    const bad = (field: string, reason: string): TypeError => new TypeError(`${where}.${field} ${reason}`);
    if (!validator?.(s)) {
      const first = validator?.errors?.[0];
      const field = first?.instancePath.slice(1) || String(first?.params['missingProperty'] ?? '');
      throw bad(field, first?.message ?? 'is invalid');
    }
    if ((s.cron === undefined) === (s.everyMs === undefined)) throw bad('cron', 'give exactly one of cron and everyMs');
    if (s.timezone !== undefined && s.cron === undefined) throw bad('timezone', 'only with cron');
    if (s.catchUpMax !== undefined && s.catchUp !== 'all') throw bad('catchUpMax', "only with catchUp: 'all'");
    if (s.cron !== undefined) {
      try {
        new Intl.DateTimeFormat('en', { timeZone: s.timezone ?? 'UTC' });
      } catch {
        throw bad('timezone', 'is not an IANA time zone');
      }
      try {
        new Cron(s.cron, { timezone: s.timezone ?? 'UTC', paused: true });
      } catch (err) {
        throw bad('cron', `is not a cron expression: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    if (seen.has(s.name)) throw bad('name', 'is given twice');
    seen.add(s.name);
    return copyScheduleDeclaration(s);
  });
}
