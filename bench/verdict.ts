import { median, type RoundResult } from './harness';

/** One target compared with its baseline at one concurrency. */
export interface Verdict {
  readonly check: string;
  /** The median over rounds of the per-round figure. */
  readonly value: number;
  /** The per-round figures, in round order. */
  readonly perRound: readonly number[];
  readonly target: string;
  /** Whether the figure meets its target; null for a figure shown for context, with no target of its own. */
  readonly pass: boolean | null;
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
  const add = (check: string, values: number[], target: string, pass: ((v: number) => boolean) | null): void => {
    if (values.length === 0) return;
    const value = median(values);
    out.push({ check, value: round3(value), perRound: values.map(round3), target, pass: pass === null ? null : pass(value) });
  };
  const calls = (r: RoundResult): number => r.callsPerSec;
  const p50 = (r: RoundResult): number => r.p50Ms;
  // The engine issue's targets (docs/benchmarks.md).
  add('warren c=64 throughput / baseline', ratio('warren', 64, calls), '>= 0.97', (v) => v >= 0.97);
  add('warren c=1 p50 / baseline', ratio('warren', 1, p50), '<= 1.20', (v) => v <= 1.2);
  add('warren+tracking c=64 throughput / baseline', ratio('warren+tracking', 64, calls), '>= 0.85', (v) => v >= 0.85);
  add('warren+tracking c=1 p50 - warren c=1 p50 (ms)', sameRound(rows, 'warren+tracking', 'warren', 1, p50, (a, b) => a - b), '<= 0.15', (v) => v <= 0.15);
  // Context, with the guarded targets in the run (amqp-guarded.ts): what plain amqplib reaches doing on
  // the wire what Warren does (the most an untracked Warren call could reach), with the least Redis
  // record a tracked call needs (the most a tracked one could), and how near Warren comes to each.
  for (const [name, over] of [['amqp-guarded', 'warren'], ['amqp-guarded+redis', 'warren+tracking']] as const) {
    add(`${name} c=64 throughput / baseline`, ratio(name, 64, calls), 'context', null);
    add(`${name} c=1 p50 / baseline`, ratio(name, 1, p50), 'context', null);
    add(`${over} c=64 throughput / ${name}, same round`, sameRound(rows, over, name, 64, calls, (a, b) => a / b), 'context', null);
    add(`${over} c=1 p50 / ${name}, same round`, sameRound(rows, over, name, 1, p50, (a, b) => a / b), 'context', null);
  }
  for (const name of [...new Set(rows.filter((r) => r.concurrency === 1).map((r) => r.target))]) {
    add(`${name} c=1 p50 ms (delayed-ACK stall check)`, rows.filter((r) => r.target === name && r.concurrency === 1).map((r) => r.p50Ms), '< 20', (v) => v < 20);
  }
  return out;
}

/** Per round, `combine(of(target), of(other))` at one concurrency: both measured within the same round. */
function sameRound(rows: readonly RoundResult[], target: string, other: string, concurrency: number, of: (r: RoundResult) => number, combine: (a: number, b: number) => number): number[] {
  return rows
    .filter((r) => r.target === target && r.concurrency === concurrency)
    .flatMap((r) => {
      const peer = rows.find((o) => o.target === other && o.concurrency === concurrency && o.round === r.round);
      const value = peer ? combine(of(r), of(peer)) : Number.NaN;
      return Number.isFinite(value) ? [value] : [];
    });
}

function round3(v: number): number {
  return Number(v.toFixed(3));
}

export function formatVerdicts(list: readonly Verdict[]): string {
  return list.map((v) => `${v.pass === null ? 'INFO' : v.pass ? 'PASS' : 'MISS'}  ${v.check}: ${v.value} (target ${v.target}; rounds: ${v.perRound.join(', ')})`).join('\n');
}
