/**
 * Generic closed-loop load driver for RPC benchmarks.
 *
 * Every target is started once; the harness then measures them in interleaved rounds
 * (warm-up, then the measured phase, for each concurrency), and finally stops them.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { LoadDriver } from './caller-process';
import { cpuSampler, processSyscalls } from './proc-stats';

/** A started target: `driver` makes its calls (in a caller process of its own, see caller-process.ts). */
export interface BenchSession {
  driver: LoadDriver;
  stop: () => Promise<void>;
  /** Optional: cumulative CPU time (user+system, µs) consumed by the server process(es). */
  serverCpuUs?: (() => Promise<number>) | undefined;
  /** Optional: the server process's resident memory now (MB). */
  serverRssMb?: (() => number | null) | undefined;
  /** Optional: the server's process id, for its system-call count. */
  serverPid?: number | undefined;
}

export interface BenchTarget {
  name: string;
  start(): Promise<BenchSession>;
}

export interface LoadOptions {
  concurrency: number;
  /** Measured calls (errors included). */
  calls: number;
  /** Calls run (at the same concurrency) before measuring; not recorded. */
  warmupCalls: number;
  /** If given, sampled before and after the measured phase to compute server CPU per call. */
  serverCpuUs?: (() => Promise<number>) | undefined;
  /** If given, sampled at the end of the measured phase. */
  serverRssMb?: (() => number | null) | undefined;
  serverPid?: number | undefined;
  /** CPU µs of RabbitMQ and of Redis so far (found once per bench: a lookup reads all of /proc). */
  brokerCpu?: BrokerCpu | undefined;
}

/** Samplers of the brokers' CPU time, undefined where the process is not on this machine. */
export interface BrokerCpu {
  readonly rabbit: (() => number) | undefined;
  readonly redis: (() => number) | undefined;
}

/** Finds the local RabbitMQ and Redis processes (by name) to sample their CPU time. */
export function brokerCpu(): BrokerCpu {
  return { rabbit: cpuSampler('beam.smp'), redis: cpuSampler('redis-server') };
}

export interface LoadResult {
  calls: number;
  errors: number;
  seconds: number;
  /** Successful calls per second of wall time. */
  callsPerSec: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  /** Client CPU: the caller process's process.cpuUsage() delta / calls (µs). */
  cpuUsPerCall: number;
  /** Server CPU per call (µs), or null when the target does not report it. */
  serverCpuUsPerCall: number | null;
  /** RabbitMQ (beam.smp) CPU per call (µs), or null when it cannot be read (not Linux, broker elsewhere). */
  rabbitCpuUsPerCall: number | null;
  /** redis-server CPU per call (µs), or null when it cannot be read. */
  redisCpuUsPerCall: number | null;
  /** The caller process's RSS at the end of the measured phase (MB). */
  rssMb: number;
  /** Server process RSS at the end of the measured phase (MB), or null when the target does not report it. */
  serverRssMb: number | null;
  /**
   * Read and write system calls per call, client and server. On a virtual machine a system call and the
   * wake-up it causes cost more than most of the JavaScript around it, so these explain much of the CPU figures.
   */
  clientSyscallsPerCall: number | null;
  serverSyscallsPerCall: number | null;
}

export interface BenchResult extends LoadResult {
  target: string;
  concurrency: number;
  warmupCalls: number;
}

export async function runLoad(driver: LoadDriver, opts: LoadOptions): Promise<LoadResult> {
  const { concurrency, calls, warmupCalls } = opts;
  if (warmupCalls > 0) await driver.warmup(concurrency, warmupCalls);

  const { rabbit, redis } = opts.brokerCpu ?? brokerCpu();
  const srv0 = opts.serverCpuUs ? await opts.serverCpuUs() : null;
  const rabbit0 = rabbit?.();
  const redis0 = redis?.();
  const sys0 = [processSyscalls(driver.pid), processSyscalls(opts.serverPid)];
  const m = await driver.measure(concurrency, calls);
  const perCall = (before: number | null | undefined, after: number | null | undefined): number | null =>
    before !== null && before !== undefined && after !== null && after !== undefined ? (after - before) / calls : null;
  const sys1 = [processSyscalls(driver.pid), processSyscalls(opts.serverPid)];
  const rabbitCpuUsPerCall = perCall(rabbit0, rabbit?.());
  const redisCpuUsPerCall = perCall(redis0, redis?.());
  const srv1 = opts.serverCpuUs && srv0 !== null ? await opts.serverCpuUs() : null;

  return {
    calls,
    errors: m.errors,
    seconds: m.seconds,
    callsPerSec: (calls - m.errors) / m.seconds,
    p50Ms: m.p50Ms,
    p90Ms: m.p90Ms,
    p99Ms: m.p99Ms,
    cpuUsPerCall: m.cpuUs / calls,
    serverCpuUsPerCall: srv0 !== null && srv1 !== null ? (srv1 - srv0) / calls : null,
    rabbitCpuUsPerCall,
    redisCpuUsPerCall,
    rssMb: m.rssMb,
    serverRssMb: opts.serverRssMb?.() ?? null,
    clientSyscallsPerCall: perCall(sys0[0], sys1[0]),
    serverSyscallsPerCall: perCall(sys0[1], sys1[1]),
  };
}

export interface RoundsPlan {
  concurrencies: readonly number[];
  callsFor: (concurrency: number) => number;
  /** Warm-up before a target's first measured run at a concurrency. */
  warmupFor: (concurrency: number) => number;
  /** Warm-up before later rounds' runs: enough to refill the pipeline after the other targets ran. */
  rewarmFor: (concurrency: number) => number;
  rounds: number;
  /** The target the others are compared with: it runs before and after each of them (see benchRounds). */
  baseline?: string | undefined;
  /** Called after each run, e.g. to print progress. */
  onResult?: ((r: RoundResult) => void) | undefined;
}

export interface RoundResult extends BenchResult {
  round: number;
  /** Position of this run within its round and concurrency, from 0. */
  slot: number;
}

/**
 * Starts every target, then measures them in rounds: in each round every
 * target runs once at each concurrency, the order turned by one place per
 * round, and the baseline (if named and present) runs again before and after
 * each other target, so that every target is bracketed by two baseline runs
 * made seconds before and after it. On a shared machine the speed of
 * everything drifts by tens of percent within minutes (the same baseline has
 * measured 8k and 19k calls/s here); comparing a run with the baseline runs
 * around it, many times over, compares like with like where one long run of
 * each would compare the machine with itself at two moments. Every target is
 * stopped in the end.
 */
export async function benchRounds(targets: readonly BenchTarget[], plan: RoundsPlan): Promise<RoundResult[]> {
  const sessions: Array<{ target: BenchTarget; session: BenchSession }> = [];
  const out: RoundResult[] = [];
  const brokers = brokerCpu();
  let stopFailure: PromiseRejectedResult | undefined;
  try {
    for (const target of targets) sessions.push({ target, session: await target.start() });
    const base = sessions.find((s) => s.target.name === plan.baseline);
    const others = sessions.filter((s) => s !== base);
    for (let round = 1; round <= plan.rounds; round++) {
      for (const concurrency of plan.concurrencies) {
        const turned = others.map((_, k) => others[(k + round - 1) % others.length] as (typeof others)[number]);
        const order = base ? [base, ...turned.flatMap((entry) => [entry, base])] : turned;
        const warmed = new Set<BenchSession>();
        for (const [slot, entry] of order.entries()) {
          const { driver, serverCpuUs, serverRssMb, serverPid } = entry.session;
          const warmupCalls = round === 1 && !warmed.has(entry.session) ? plan.warmupFor(concurrency) : plan.rewarmFor(concurrency);
          warmed.add(entry.session);
          const r = await runLoad(driver, { concurrency, calls: plan.callsFor(concurrency), warmupCalls, serverCpuUs, serverRssMb, serverPid, brokerCpu: brokers });
          const row: RoundResult = { target: entry.target.name, concurrency, warmupCalls, round, slot, ...r };
          out.push(row);
          plan.onResult?.(row);
        }
      }
    }
  } finally {
    // Every target is stopped, even when one of them fails to.
    stopFailure = (await Promise.allSettled(sessions.map(({ session }) => session.stop()))).find((r): r is PromiseRejectedResult => r.status === 'rejected');
  }
  if (stopFailure) throw stopFailure.reason;
  return out;
}

/** Median of a non-empty list (mean of the middle two for an even count). */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** One row per target × concurrency: the median of each figure over the rounds. */
export function summarize(rows: readonly RoundResult[]): BenchResult[] {
  const groups = new Map<string, RoundResult[]>();
  for (const r of rows) {
    const key = `${r.target}\u0000${r.concurrency}`;
    const group = groups.get(key);
    if (group) group.push(r);
    else groups.set(key, [r]);
  }
  return [...groups.values()].map((g) => {
    const first = g[0] as RoundResult;
    const med = (f: (r: RoundResult) => number | null): number | null => {
      const values = g.map(f).filter((v): v is number => v !== null);
      return values.length === 0 ? null : median(values);
    };
    return {
      target: first.target,
      concurrency: first.concurrency,
      warmupCalls: first.warmupCalls,
      calls: first.calls,
      errors: g.reduce((sum, r) => sum + r.errors, 0),
      seconds: med((r) => r.seconds) ?? 0,
      callsPerSec: med((r) => r.callsPerSec) ?? 0,
      p50Ms: med((r) => r.p50Ms) ?? 0,
      p90Ms: med((r) => r.p90Ms) ?? 0,
      p99Ms: med((r) => r.p99Ms) ?? 0,
      cpuUsPerCall: med((r) => r.cpuUsPerCall) ?? 0,
      serverCpuUsPerCall: med((r) => r.serverCpuUsPerCall),
      rabbitCpuUsPerCall: med((r) => r.rabbitCpuUsPerCall),
      redisCpuUsPerCall: med((r) => r.redisCpuUsPerCall),
      rssMb: Math.max(...g.map((r) => r.rssMb)),
      serverRssMb: med((r) => r.serverRssMb),
      clientSyscallsPerCall: med((r) => r.clientSyscallsPerCall),
      serverSyscallsPerCall: med((r) => r.serverSyscallsPerCall),
    };
  });
}

const COLUMNS: ReadonlyArray<[string, (r: BenchResult) => string]> = [
  ['target', (r) => r.target],
  ['conc', (r) => String(r.concurrency)],
  ['calls', (r) => String(r.calls)],
  ['errors', (r) => String(r.errors)],
  ['calls/s', (r) => r.callsPerSec.toFixed(0)],
  ['p50 ms', (r) => r.p50Ms.toFixed(3)],
  ['p90 ms', (r) => r.p90Ms.toFixed(3)],
  ['p99 ms', (r) => r.p99Ms.toFixed(3)],
  ['client CPU µs/call', (r) => r.cpuUsPerCall.toFixed(1)],
  ['server CPU µs/call', (r) => (r.serverCpuUsPerCall === null ? '-' : r.serverCpuUsPerCall.toFixed(1))],
  ['caller+service+Redis CPU µs/call', (r) => (r.serverCpuUsPerCall === null ? '-' : (r.cpuUsPerCall + r.serverCpuUsPerCall + (r.redisCpuUsPerCall ?? 0)).toFixed(1))],
  ['RabbitMQ CPU µs/call', (r) => (r.rabbitCpuUsPerCall === null ? '-' : r.rabbitCpuUsPerCall.toFixed(1))],
  ['Redis CPU µs/call', (r) => (r.redisCpuUsPerCall === null ? '-' : r.redisCpuUsPerCall.toFixed(1))],
  ['client syscalls/call', (r) => (r.clientSyscallsPerCall === null ? '-' : r.clientSyscallsPerCall.toFixed(2))],
  ['server syscalls/call', (r) => (r.serverSyscallsPerCall === null ? '-' : r.serverSyscallsPerCall.toFixed(2))],
  ['server RSS MB', (r) => (r.serverRssMb === null ? '-' : r.serverRssMb.toFixed(1))],
  ['client RSS MB', (r) => r.rssMb.toFixed(1)],
];

export function formatTable(results: readonly BenchResult[]): string {
  const rows = [COLUMNS.map(([h]) => h), ...results.map((r) => COLUMNS.map(([, f]) => f(r)))];
  const widths = COLUMNS.map((_, i) => Math.max(...rows.map((row) => (row[i] ?? '').length)));
  const fmt = (row: string[]): string =>
    row.map((cell, i) => (i === 0 ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0))).join('  ');
  const [header, ...body] = rows;
  return [fmt(header ?? []), widths.map((w) => '-'.repeat(w)).join('  '), ...body.map(fmt)].join('\n');
}

/** Writes `data` as pretty JSON, creating the parent directory. */
export async function writeJson(file: string, data: unknown): Promise<void> {
  await mkdir(dirname(file), { recursive: true });
  await writeFile(file, JSON.stringify(data, null, 2) + '\n');
}
