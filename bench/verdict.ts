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

/** The peer frameworks (bench/peer-target.ts) Warren's lone call is judged against. */
const peers = ['moleculer', 'nestjs-rmq', 'rabbitmq-client'] as const;
/** The second plain-amqplib variant: the targets count against the faster of it and the baseline. */
const namedPlain = 'amqp-named';

/**
 * The figures the speed issue (#29) sets as targets. A target's run is
 * compared with the baseline runs just before and after it (their mean; the
 * one there is, at an end), and the verdict is the median of those ratios
 * over all rounds: a machine that slows down for a while then slows both
 * sides of one ratio, not one target against another measured minutes later.
 * "The faster plain variant" is, per round, the better of that bracketing
 * baseline and `amqp-named`'s run of the same round; the peers are compared
 * with `warren` within each round. The delayed-ACK stall (Nagle left on)
 * shows as a c=1 p50 near 40 ms: the last checks catch it coming back.
 */
export function verdicts(rows: readonly RoundResult[], baseline = 'amqp-direct'): Verdict[] {
  const out: Verdict[] = [];
  const bracket = (r: RoundResult, of: (r: RoundResult) => number): number | undefined => {
    const around = rows.filter((b) => b.target === baseline && b.concurrency === r.concurrency && b.round === r.round && Math.abs(b.slot - r.slot) === 1);
    return around.length === 0 ? undefined : around.reduce((sum, b) => sum + of(b), 0) / around.length;
  };
  /** Per round, `of(target)` over what `reference` makes of that round's row (skipped where it makes nothing). */
  const per = (name: string, concurrency: number, of: (r: RoundResult) => number, reference: (r: RoundResult) => number | undefined): number[] =>
    rows
      .filter((r) => r.target === name && r.concurrency === concurrency)
      .flatMap((r) => {
        const ref = reference(r);
        const value = ref === undefined ? Number.NaN : of(r) / ref;
        return Number.isFinite(value) ? [value] : [];
      });
  const sameRoundRow = (name: string, r: RoundResult): RoundResult | undefined => rows.find((o) => o.target === name && o.concurrency === r.concurrency && o.round === r.round);
  /** The faster plain variant's figure in `r`'s round: the bracketing baseline or amqp-named, whichever is `better`. */
  const plain = (of: (r: RoundResult) => number, better: (a: number, b: number) => number) => (r: RoundResult): number | undefined => {
    const named = sameRoundRow(namedPlain, r);
    const figures = [bracket(r, of), named ? of(named) : undefined].filter((v): v is number => v !== undefined);
    return figures.length === 0 ? undefined : figures.reduce((a, b) => better(a, b));
  };
  /** The best peer's figure in `r`'s round. */
  const bestPeer = (of: (r: RoundResult) => number, better: (a: number, b: number) => number) => (r: RoundResult): number | undefined => {
    const figures = peers.flatMap((p) => {
      const row = sameRoundRow(p, r);
      return row ? [of(row)] : [];
    });
    return figures.length === 0 ? undefined : figures.reduce((a, b) => better(a, b));
  };
  const add = (check: string, values: number[], target: string, pass: ((v: number) => boolean) | null): void => {
    if (values.length === 0) return;
    const value = median(values);
    out.push({ check, value: round3(value), perRound: values.map(round3), target, pass: pass === null ? null : pass(value) });
  };
  const calls = (r: RoundResult): number => r.callsPerSec;
  const p50 = (r: RoundResult): number => r.p50Ms;
  const fasterCalls = plain(calls, Math.max);
  const fasterP50 = plain(p50, Math.min);
  add('warren c=1 p50 / best peer p50', per('warren', 1, p50, bestPeer(p50, Math.min)), '<= 1.00', (v) => v <= 1);
  add('warren c=1 calls/s / best peer calls/s', per('warren', 1, calls, bestPeer(calls, Math.max)), '>= 1.00', (v) => v >= 1);
  add('warren c=1 p50 / faster plain p50', per('warren', 1, p50, fasterP50), '<= 1.20', (v) => v <= 1.2);
  add('warren c=64 throughput / faster plain', per('warren', 64, calls, fasterCalls), '>= 1.00', (v) => v >= 1);
  add('warren+tracking c=64 throughput / faster plain', per('warren+tracking', 64, calls, fasterCalls), '>= 0.85', (v) => v >= 0.85);
  add('warren+tracking c=1 p50 - warren c=1 p50 (ms)', sameRound(rows, 'warren+tracking', 'warren', 1, p50, (a, b) => a - b), '<= 0.10', (v) => v <= 0.1);
  // Context: each target against the baseline alone, as every dated figure before the speed issue was.
  for (const name of [...new Set(rows.map((r) => r.target))].filter((t) => t !== baseline)) {
    add(`${name} c=64 throughput / baseline`, per(name, 64, calls, (r) => bracket(r, calls)), 'context', null);
    add(`${name} c=1 p50 / baseline`, per(name, 1, p50, (r) => bracket(r, p50)), 'context', null);
  }
  // Context, with the guarded targets in the run (amqp-guarded.ts): how near Warren comes to plain amqplib doing on
  // the wire what Warren does (the most an untracked Warren call could reach), and with the least Redis record a
  // tracked call needs (the most a tracked one could).
  for (const [name, over] of [['amqp-guarded', 'warren'], ['amqp-guarded+redis', 'warren+tracking']] as const) {
    add(`${over} c=64 throughput / ${name}, same round`, sameRound(rows, over, name, 64, calls, (a, b) => a / b), 'context', null);
    add(`${over} c=1 p50 / ${name}, same round`, sameRound(rows, over, name, 1, p50, (a, b) => a / b), 'context', null);
  }
  // Context: the floors of the speed issue's designs (#29) against what its target is set on, so a run says whether any
  // tracker built that way could reach the 0.85 of `warren+tracking` (amqp-guarded.ts).
  for (const name of ['amqp-guarded-direct', 'amqp-guarded-direct+redis1']) {
    add(`${name} c=64 throughput / faster plain`, per(name, 64, calls, fasterCalls), 'context', null);
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
