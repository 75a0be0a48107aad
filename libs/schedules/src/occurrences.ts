import { Cron } from 'croner';
import type { Timing } from './spec';

/**
 * When a schedule's occurrences fall, as epoch milliseconds. Cron expressions are evaluated by
 * croner in the schedule's IANA time zone, with Vixie cron's DST rules (docs/scheduling.md):
 * a fixed time that does not exist (spring forward) fires once, at the first valid time after
 * the gap; a fixed time that occurs twice (fall back) fires once, at its first occurrence;
 * wildcard and step fields (every 15 minutes, say) fire in both passes of a repeated hour.
 */

const crons = new Map<string, Cron>();

function cronOf(cron: string, timezone: string): Cron {
  const key = `${timezone}\u0000${cron}`;
  let c = crons.get(key);
  if (c === undefined) {
    // Parsed once per expression; a bounded cache, since expressions come from operators.
    if (crons.size >= 1000) crons.clear();
    c = new Cron(cron, { timezone, paused: true });
    crons.set(key, c);
  }
  return c;
}

/** The first occurrence strictly after `after`, or undefined when there is none (a cron that never fires again). */
export function nextOccurrence(timing: Timing, after: number): number | undefined {
  switch (timing.kind) {
    case 'interval': {
      if (after < timing.anchor) return timing.anchor + timing.everyMs;
      const k = Math.floor((after - timing.anchor) / timing.everyMs) + 1;
      return timing.anchor + k * timing.everyMs;
    }
    case 'cron': {
      const next = cronOf(timing.cron, timing.timezone).nextRun(new Date(after));
      return next === null ? undefined : next.getTime();
    }
    default: {
      const never: never = timing;
      return never;
    }
  }
}

/**
 * The occurrences in `(after, until]`, oldest first, at most `limit` of them (`more` says whether
 * some were left out).
 */
export function occurrencesBetween(timing: Timing, after: number, until: number, limit: number): { readonly times: number[]; readonly more: boolean } {
  const times: number[] = [];
  let t = nextOccurrence(timing, after);
  while (t !== undefined && t <= until) {
    if (times.length === limit) return { times, more: true };
    times.push(t);
    t = nextOccurrence(timing, t);
  }
  return { times, more: false };
}
