import { median, type RoundResult } from './harness';

/** One target compared with its baseline at one concurrency. */
export interface Verdict {
  readonly check: string;
  /** The median over rounds of the per-round figure. */
  readonly value: number;
  /** The per-round figures, in round order. */
  readonly perRound: readonly number[];
  readonly target: string;
  readonly pass: boolean;
}

/**
 * The figures the RPC and in-flight issues set as targets. A target's run is
 * compared with the baseline runs just before and after it (their mean; the
 * one there is, at an end), and the verdict is the median of those ratios
 * over all rounds: a machine that slows down for a while then slows both
 * sides of one ratio, not one target against another measured minutes later.
 * The delayed-ACK stall (Nagle left on) shows as a c=1 p50 near 40 ms: the
 * last checks catch it coming back.
 */
export function verdicts(rows: readonly RoundResult[], baseline = 'amqp-direct'): Verdict[] {
  const out: Verdict[] = [];
  const ratio = (name: string, concurrency: number, of: (r: RoundResult) => number): number[] =>
    rows
      .filter((r) => r.target === name && r.concurrency === concurrency)
      .flatMap((r) => {
        const around = rows.filter((b) => b.target === baseline && b.concurrency === concurrency && b.round === r.round && Math.abs(b.slot - r.slot) === 1);
        if (around.length === 0) return [];
        const base = around.reduce((sum, b) => sum + of(b), 0) / around.length;
        const value = of(r) / base;
        return Number.isFinite(value) ? [value] : [];
      });
  const add = (check: string, values: number[], target: string, pass: (v: number) => boolean): void => {
    if (values.length === 0) return;
    const value = median(values);
    out.push({ check, value: round3(value), perRound: values.map(round3), target, pass: pass(value) });
  };
  // The engine issue's targets (docs/benchmarks.md).
  add('warren c=64 throughput / baseline', ratio('warren', 64, (r) => r.callsPerSec), '>= 0.97', (v) => v >= 0.97);
  add('warren c=1 p50 / baseline', ratio('warren', 1, (r) => r.p50Ms), '<= 1.20', (v) => v <= 1.2);
  add('warren+tracking c=64 throughput / baseline', ratio('warren+tracking', 64, (r) => r.callsPerSec), '>= 0.85', (v) => v >= 0.85);
  add('warren+tracking c=1 p50 - warren c=1 p50 (ms)', sameRoundDifference(rows, 'warren+tracking', 'warren', 1, (r) => r.p50Ms), '<= 0.15', (v) => v <= 0.15);
  for (const name of [...new Set(rows.filter((r) => r.concurrency === 1).map((r) => r.target))]) {
    add(`${name} c=1 p50 ms (delayed-ACK stall check)`, rows.filter((r) => r.target === name && r.concurrency === 1).map((r) => r.p50Ms), '< 20', (v) => v < 20);
  }
  return out;
}

/** Per round, `of(target) - of(other)` at one concurrency: both measured within the same round. */
function sameRoundDifference(rows: readonly RoundResult[], target: string, other: string, concurrency: number, of: (r: RoundResult) => number): number[] {
  return rows
    .filter((r) => r.target === target && r.concurrency === concurrency)
    .flatMap((r) => {
      const peer = rows.find((o) => o.target === other && o.concurrency === concurrency && o.round === r.round);
      return peer ? [of(r) - of(peer)] : [];
    });
}

function round3(v: number): number {
  return Number(v.toFixed(3));
}

export function formatVerdicts(list: readonly Verdict[]): string {
  return list.map((v) => `${v.pass ? 'PASS' : 'MISS'}  ${v.check}: ${v.value} (target ${v.target}; rounds: ${v.perRound.join(', ')})`).join('\n');
}
