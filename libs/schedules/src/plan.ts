import { occurrencesBetween } from './occurrences';
import type { Schedule } from './spec';
import type { ScheduleState } from './store-port';

/** What the scheduler does with the occurrences a schedule has due now, oldest first. */
export interface Plan {
  /** Occurrences to fire now, oldest first (catch-ups, then those on time). */
  readonly fire: readonly number[];
  /** Occurrences that wait for the running call to end (overlap `queue`), oldest first: the new `queued`. */
  readonly queue: readonly number[];
  /** Occurrences skipped because a call was running (overlap `skip`, or past the queue's room). */
  readonly skip: readonly number[];
  /** How many occurrences were missed: older than the grace, and not fired by the catch-up policy. */
  readonly missed: number;
  /** The newest occurrence this plan handles (the state's next `lastOccurrence`); undefined when nothing was due. */
  readonly through: number | undefined;
}

/** Occurrences read per step when a long downtime left many behind. */
const chunk = 10_000;

/**
 * Decides, without I/O, what happens to a schedule's occurrences due at `now`: those late by at
 * most `graceMs` are on time (a scheduler that took over after a crash fires them as if nothing
 * happened); older ones were missed and go through the catch-up policy; then the overlap policy
 * applies to everything left to fire, given whether a call of the schedule is `running`.
 */
export function planOccurrences(schedule: Schedule, state: ScheduleState, now: number, graceMs: number, running: boolean): Plan {
  const start = state.lastOccurrence ?? schedule.createdAt;
  const keepLate = schedule.catchUp.policy === 'none' ? 0 : schedule.catchUp.policy === 'last' ? 1 : schedule.catchUp.max;
  // Walk the due occurrences in chunks, keeping only the newest `keepLate` of the late ones.
  const late: number[] = [];
  const onTime: number[] = [];
  let missed = 0;
  let through: number | undefined;
  let after = start;
  for (;;) {
    const { times, more } = occurrencesBetween(schedule.timing, after, now, chunk);
    for (const t of times) {
      if (now - t > graceMs) {
        late.push(t);
        if (late.length > keepLate) {
          late.shift();
          missed++;
        }
      } else {
        onTime.push(t);
      }
    }
    if (times.length > 0) through = times[times.length - 1];
    if (!more) break;
    after = times[times.length - 1] as number;
  }
  const fire: number[] = [];
  const queue: number[] = [];
  const skip: number[] = [];
  // The queue has room for the catch-up's count, and at least one (docs/scheduling.md).
  const room = Math.max(1, keepLate);
  let busy = running;
  // Occurrences already waiting go first, then the late ones the catch-up keeps, then those on time.
  for (const t of [...(state.queued ?? []), ...late, ...onTime]) {
    if (!busy || schedule.overlap === 'allow') {
      fire.push(t);
      busy = true;
    } else if (schedule.overlap === 'queue' && queue.length < room) {
      queue.push(t);
    } else {
      skip.push(t);
    }
  }
  return { fire, queue, skip, missed, through };
}
