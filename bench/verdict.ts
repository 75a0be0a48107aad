import type { BenchResult } from './harness';

/** One target compared with its baseline at one concurrency. */
export interface Verdict {
  readonly check: string;
  readonly value: number;
  readonly target: string;
  readonly pass: boolean;
}

const find = (results: readonly BenchResult[], target: string, concurrency: number): BenchResult | undefined =>
  results.find((r) => r.target === target && r.concurrency === concurrency);

/**
 * The figures the RPC and in-flight issues set as targets, computed from one
 * run so they compare like with like. The delayed-ACK stall (Nagle left on)
 * shows as a c=1 p50 near 40 ms: the last check catches it coming back.
 */
export function verdicts(results: readonly BenchResult[], baseline = 'amqp-direct'): Verdict[] {
  const out: Verdict[] = [];
  const base64 = find(results, baseline, 64);
  const base1 = find(results, baseline, 1);
  const ratio = (name: string, c: number): number | undefined => {
    const r = find(results, name, c);
    return r && base64 && c === 64 ? r.callsPerSec / base64.callsPerSec : r && base1 ? r.p50Ms / base1.p50Ms : undefined;
  };
  const add = (check: string, value: number | undefined, target: string, pass: (v: number) => boolean): void => {
    if (value !== undefined) out.push({ check, value: Number(value.toFixed(3)), target, pass: pass(value) });
  };
  add('warren c=64 throughput / baseline', ratio('warren', 64), '>= 0.90', (v) => v >= 0.9);
  add('warren c=1 p50 / baseline', ratio('warren', 1), '<= 1.30', (v) => v <= 1.3);
  add('warren+tracking c=64 throughput / baseline', ratio('warren+tracking', 64), '>= 0.70', (v) => v >= 0.7);
  for (const r of results.filter((x) => x.concurrency === 1)) add(`${r.target} c=1 p50 ms (delayed-ACK stall check)`, r.p50Ms, '< 20', (v) => v < 20);
  return out;
}

export function formatVerdicts(list: readonly Verdict[]): string {
  return list.map((v) => `${v.pass ? 'PASS' : 'MISS'}  ${v.check}: ${v.value} (target ${v.target})`).join('\n');
}
