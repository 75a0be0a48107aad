import type { Logger } from '@warren/logger';
import type { Counts } from './counts';
import type { Fired } from './fire';
import type { Schedule } from './spec';

/** Where a failure is told: the scheduler's log and counts, and the occurrence fired (none for a run-now). */
export interface FailureSink {
  readonly log: Logger;
  readonly counts: Counts;
  readonly occurrence?: number;
}

/**
 * Makes a fired call that ends in an error seen (docs/scheduling.md, "When a run fails"): one
 * `warn` line naming the schedule, the method, the call id and the wire error's code and message,
 * and `warren_schedule_failed_total{schedule,method}` one up. The callee logs its own side of it
 * (its handler's exception, docs/services.md); this is the scheduler's, where nobody waits for the answer.
 */
export function watchFailure(fired: Fired, schedule: Schedule, to: FailureSink): void {
  const { log, counts } = to;
  counts.calls(schedule.name, schedule.method);
  void fired.ended.then((end) => {
    if (end.outcome !== 'error') return;
    counts.fail(schedule.name, schedule.method);
    const when = to.occurrence === undefined ? { manual: true } : { occurrence: new Date(to.occurrence).toISOString() };
    log.warn({ schedule: schedule.name, method: schedule.method, callId: fired.callId, code: end.errorCode, error: end.errorMessage, ...when }, 'scheduled run failed');
  });
}
