import type { Logger } from '@warren/logger';
import type { Counts } from './counts';
import type { Fired } from './fire';
import type { Schedule } from './spec';

/**
 * Makes a fired call that ends in an error seen (docs/scheduling.md, "When a run fails"): one
 * `warn` line naming the schedule, the method, the call id and the wire error's code and message,
 * and `warren_schedule_failed_total{schedule,method}` one up. The callee logs its own side of it
 * (its handler's exception, docs/services.md); this is the scheduler's, where nobody waits for the answer.
 */
export function watchFailure(fired: Fired, schedule: Schedule, how: { readonly occurrence?: number }, log: Logger, counts: Counts): void {
  counts.calls(schedule.name, schedule.method);
  void fired.ended.then((end) => {
    if (end.outcome !== 'error') return;
    counts.fail(schedule.name, schedule.method);
    const when = how.occurrence === undefined ? { manual: true } : { occurrence: new Date(how.occurrence).toISOString() };
    log.warn({ schedule: schedule.name, method: schedule.method, callId: fired.callId, code: end.errorCode, error: end.errorMessage, ...when }, 'scheduled run failed');
  });
}
