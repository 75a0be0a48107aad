/** What one scheduler did with a schedule's occurrences since it started (/metrics: warren_schedule_*_total). */
export interface ScheduleCounts {
  /** Occurrences fired (on time or caught up), and run-nows. */
  fired: number;
  /** Occurrences older than the grace that the catch-up policy did not fire. */
  missed: number;
  /** Occurrences not fired because a call of the schedule was running (overlap policy). */
  skipped: number;
}

/** Counts per schedule name; a counter only ever goes up (Prometheus counters). */
export class Counts {
  private readonly byName = new Map<string, ScheduleCounts>();

  add(name: string, field: keyof ScheduleCounts, n = 1): void {
    if (n === 0) return;
    let c = this.byName.get(name);
    if (c === undefined) this.byName.set(name, (c = { fired: 0, missed: 0, skipped: 0 }));
    c[field] += n;
  }

  /** A copy, per schedule name. */
  snapshot(): Map<string, ScheduleCounts> {
    return new Map([...this.byName].map(([k, v]) => [k, { ...v }]));
  }
}
