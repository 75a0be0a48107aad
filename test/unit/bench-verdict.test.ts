import type { RoundResult } from '../../bench/harness';
import { formatVerdicts, verdicts } from '../../bench/verdict';

/** One run's row with what the verdicts read; the rest of the figures are left at zero. */
function run(target: string, concurrency: number, round: number, slot: number, callsPerSec: number, p50Ms: number): RoundResult {
  return {
    target, concurrency, round, slot, callsPerSec, p50Ms, warmupCalls: 0, calls: 1, errors: 0, seconds: 1, p90Ms: p50Ms, p99Ms: p50Ms, cpuUsPerCall: 0,
    serverCpuUsPerCall: null, rabbitCpuUsPerCall: null, redisCpuUsPerCall: null, rssMb: 0, serverRssMb: null, clientSyscallsPerCall: null, serverSyscallsPerCall: null,
  };
}

/** One round at c=64 and c=1: the baseline runs before and after each other target, as benchRounds orders them. */
function round(n: number, figures: Record<string, [number, number]>, base: [number, number] = [1000, 0.5]): RoundResult[] {
  return [64, 1].flatMap((c) => {
    const rows = [run('amqp-direct', c, n, 0, base[0], base[1])];
    for (const [target, [calls, p50]] of Object.entries(figures)) {
      rows.push(run(target, c, n, rows.length, c === 64 ? calls : 0, c === 1 ? p50 : 0));
      rows.push(run('amqp-direct', c, n, rows.length, base[0], base[1]));
    }
    return rows;
  });
}

describe('bench verdicts', () => {
  it('judges the targets against the faster plain variant and the best peer of each round, and leaves the rest as context', () => {
    const rows = [
      ...round(1, { 'amqp-named': [1100, 0.45], moleculer: [800, 0.6], 'nestjs-rmq': [700, 0.7], 'amqp-guarded': [900, 0.55], 'amqp-guarded+redis': [700, 0.6], warren: [870, 0.58], 'warren+tracking': [650, 0.65], 'amqp-guarded-direct': [990, 0.5], 'amqp-guarded-direct+redis1': [880, 0.56] }),
      ...round(2, { 'amqp-named': [900, 0.55], moleculer: [850, 0.55], 'nestjs-rmq': [700, 0.7], 'amqp-guarded': [880, 0.56], 'amqp-guarded+redis': [720, 0.62], warren: [860, 0.6], 'warren+tracking': [640, 0.66], 'amqp-guarded-direct': [930, 0.51], 'amqp-guarded-direct+redis1': [860, 0.57] }),
      ...round(3, { 'amqp-named': [1000, 0.5], moleculer: [820, 0.62], 'nestjs-rmq': [650, 0.75], 'amqp-guarded': [890, 0.55], 'amqp-guarded+redis': [710, 0.61], warren: [980, 0.59], 'warren+tracking': [630, 0.7], 'amqp-guarded-direct': [960, 0.5], 'amqp-guarded-direct+redis1': [840, 0.58] }),
    ];
    const byCheck = new Map(verdicts(rows).map((v) => [v.check, v]));

    // Round 1: amqp-named (1100) beats the baseline (1000); rounds 2 and 3: the baseline (1000) is the faster or equal.
    expect(byCheck.get('warren c=64 throughput / faster plain')).toMatchObject({ perRound: [0.791, 0.86, 0.98], value: 0.86, pass: false });
    // p50: 0.45 (amqp-named), then the baseline's 0.5 twice.
    expect(byCheck.get('warren c=1 p50 / faster plain p50')).toMatchObject({ perRound: [1.289, 1.2, 1.18], value: 1.2, pass: true });
    expect(byCheck.get('warren c=1 p50 / best peer p50')).toMatchObject({ perRound: [0.967, 1.091, 0.952], value: 0.967, pass: true });
    expect(byCheck.get('warren+tracking c=64 throughput / faster plain')).toMatchObject({ perRound: [0.591, 0.64, 0.63], value: 0.63, pass: false });
    expect(byCheck.get('warren+tracking c=1 p50 - warren c=1 p50 (ms)')).toMatchObject({ value: 0.07, pass: true });
    expect(byCheck.get('warren c=64 throughput / baseline')).toMatchObject({ value: 0.87, perRound: [0.87, 0.86, 0.98], pass: null });
    expect(byCheck.get('warren c=64 throughput / amqp-guarded, same round')).toMatchObject({ perRound: [0.967, 0.977, 1.101], value: 0.977, pass: null });
    expect(byCheck.get('warren+tracking c=1 p50 / amqp-guarded+redis, same round')).toMatchObject({ value: 1.083, pass: null });
    // The floors of the designs against the faster plain variant: 1100, then 1000 twice.
    expect(byCheck.get('amqp-guarded-direct c=64 throughput / faster plain')).toMatchObject({ perRound: [0.9, 0.93, 0.96], value: 0.93, pass: null });
    expect(byCheck.get('amqp-guarded-direct+redis1 c=64 throughput / faster plain')).toMatchObject({ perRound: [0.8, 0.86, 0.84], value: 0.84, pass: null });
    expect(formatVerdicts(verdicts(rows))).toMatch(/^INFO {2}amqp-guarded c=64 throughput \/ baseline: 0\.89 \(target context;/m);
  });

  it('judges calls/s at c=1 against the best peer too, and leaves out what did not run', () => {
    const rows = [...round(1, { moleculer: [0, 0.6], warren: [0, 0.5] })];
    // round() sets calls/s only at c=64; give c=1 its own.
    for (const r of rows) if (r.concurrency === 1) r.callsPerSec = r.target === 'warren' ? 2000 : r.target === 'moleculer' ? 1600 : 1900;
    const checks = verdicts(rows);
    expect(checks.find((v) => v.check === 'warren c=1 calls/s / best peer calls/s')).toMatchObject({ value: 1.25, pass: true });
    const names = checks.map((v) => v.check);
    expect(names.some((c) => c.includes('guarded') || c.includes('tracking'))).toBe(false);
    expect(names).toContain('warren c=64 throughput / faster plain');
  });
});
