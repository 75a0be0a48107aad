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
  it('judges the targets against the bracketing baseline runs and leaves the guarded figures as context', () => {
    const rows = [
      ...round(1, { 'amqp-guarded': [900, 0.55], 'amqp-guarded+redis': [700, 0.6], warren: [870, 0.58], 'warren+tracking': [650, 0.65] }),
      ...round(2, { 'amqp-guarded': [880, 0.56], 'amqp-guarded+redis': [720, 0.62], warren: [860, 0.6], 'warren+tracking': [640, 0.66] }),
      ...round(3, { 'amqp-guarded': [890, 0.55], 'amqp-guarded+redis': [710, 0.61], warren: [980, 0.59], 'warren+tracking': [630, 0.7] }),
    ];
    const byCheck = new Map(verdicts(rows).map((v) => [v.check, v]));

    expect(byCheck.get('warren c=64 throughput / baseline')).toMatchObject({ value: 0.87, perRound: [0.87, 0.86, 0.98], pass: false });
    expect(byCheck.get('warren c=1 p50 / baseline')).toMatchObject({ value: 1.18, pass: true });
    expect(byCheck.get('warren+tracking c=1 p50 - warren c=1 p50 (ms)')).toMatchObject({ value: 0.07, pass: true });
    expect(byCheck.get('amqp-guarded c=64 throughput / baseline')).toMatchObject({ value: 0.89, target: 'context', pass: null });
    expect(byCheck.get('warren c=64 throughput / amqp-guarded, same round')).toMatchObject({ perRound: [0.967, 0.977, 1.101], value: 0.977, pass: null });
    expect(byCheck.get('warren+tracking c=64 throughput / amqp-guarded+redis, same round')).toMatchObject({ value: 0.889, pass: null });
    expect(byCheck.get('warren+tracking c=1 p50 / amqp-guarded+redis, same round')).toMatchObject({ value: 1.083, pass: null });
    expect(formatVerdicts(verdicts(rows))).toMatch(/^INFO {2}amqp-guarded c=64 throughput \/ baseline: 0\.89 \(target context;/m);
  });

  it('shows no context line for a guarded target that did not run', () => {
    const checks = verdicts([...round(1, { warren: [870, 0.58] })]).map((v) => v.check);
    expect(checks).toContain('warren c=64 throughput / baseline');
    expect(checks.some((c) => c.includes('guarded'))).toBe(false);
  });
});
