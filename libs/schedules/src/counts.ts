/** What one scheduler did with a schedule's occurrences since it started (/metrics: warren_schedule_*_total). */
export interface ScheduleCounts {
  /** Occurrences fired (on time or caught up), and run-nows. */
  fired: number;
  /** Occurrences older than the grace that the catch-up policy did not fire. */
  missed: number;
  /** Occurrences not fired because a call of the schedule was running (overlap policy). */
  skipped: number;
  /** Fired calls (occurrences and run-nows) that ended in an error, by the method called (a replaced schedule may have called several). */
  failed: Record<string, number>;
}

/** The counts that are one number per schedule. */
export type ScheduleCountField = 'fired' | 'missed' | 'skipped';

/** Counts per schedule name; a counter only ever goes up (Prometheus counters). */
export class Counts {
  private readonly byName = new Map<string, ScheduleCounts>();

  add(name: string, field: ScheduleCountField, n = 1): void {
    if (n === 0) return;
    this.of(name)[field] += n;
  }

  /**
   * Shows `name`'s failures of `method` at 0 before the first: a counter that appears at 1 is an
   * increase Prometheus cannot see, so an alert on the first failure needs the 0 before it.
   */
  calls(name: string, method: string): void {
    const failed = this.of(name).failed;
    failed[method] ??= 0;
  }

  /** Counts one failed run of `name`, which called `method`. */
  fail(name: string, method: string): void {
    const failed = this.of(name).failed;
    failed[method] = (failed[method] ?? 0) + 1;
  }

  /** A copy, per schedule name. */
  snapshot(): Map<string, ScheduleCounts> {
    return new Map([...this.byName].map(([k, v]) => [k, { ...v, failed: { ...v.failed } }]));
  }

  private of(name: string): ScheduleCounts {
    let c = this.byName.get(name);
    // A null-prototype record: a method named `__proto__` or `constructor` is a key like any other.
    if (c === undefined) this.byName.set(name, (c = { fired: 0, missed: 0, skipped: 0, failed: Object.create(null) as Record<string, number> }));
    return c;
  }
}
