/**
 * Generic closed-loop load driver for RPC benchmarks.
 *
 * A target is started once; the harness then runs each concurrency level against the same
 * session (warmup first, then the measured phase), and finally stops it.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { cpuSampler } from './system-cpu';

/** A started target. `call` performs one RPC round trip and rejects on failure/timeout. */
export interface BenchSession {
  call: () => Promise<void>;
  stop: () => Promise<void>;
  /** Optional: cumulative CPU time (user+system, µs) consumed by the server process(es). */
  serverCpuUs?: (() => Promise<number>) | undefined;
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
  /** Client CPU: process.cpuUsage() delta of THIS process / calls (µs). */
  cpuUsPerCall: number;
  /** Server CPU per call (µs), or null when the target does not report it. */
  serverCpuUsPerCall: number | null;
  /** RabbitMQ (beam.smp) CPU per call (µs), or null when it cannot be read (not Linux, broker elsewhere). */
  rabbitCpuUsPerCall: number | null;
  /** redis-server CPU per call (µs), or null when it cannot be read. */
  redisCpuUsPerCall: number | null;
  /** Client RSS at the end of the measured phase (MB). */
  rssMb: number;
}

export interface BenchResult extends LoadResult {
  target: string;
  concurrency: number;
  warmupCalls: number;
}

/** Runs `concurrency` loops, each awaiting one call at a time, until `calls` have been issued and completed. */
async function drive(call: () => Promise<void>, concurrency: number, calls: number, latNs: Float64Array | null): Promise<number> {
  let issued = 0;
  let errors = 0;
  let ok = 0;
  const loop = async (): Promise<void> => {
    while (issued < calls) {
      issued++;
      const t0 = process.hrtime.bigint();
      try {
        await call();
        if (latNs) latNs[ok++] = Number(process.hrtime.bigint() - t0);
      } catch {
        errors++;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, calls)) }, loop));
  return errors;
}

/** Nearest-rank percentile of an ascending-sorted array, in ms (NaN when empty). */
function percentileMs(sortedNs: Float64Array, p: number): number {
  if (sortedNs.length === 0) return Number.NaN;
  const idx = Math.min(sortedNs.length - 1, Math.max(0, Math.ceil((p / 100) * sortedNs.length) - 1));
  return (sortedNs[idx] ?? Number.NaN) / 1e6;
}

export async function runLoad(call: () => Promise<void>, opts: LoadOptions): Promise<LoadResult> {
  const { concurrency, calls, warmupCalls } = opts;
  if (warmupCalls > 0) await drive(call, concurrency, warmupCalls, null);

  const latNs = new Float64Array(calls);
  const rabbit = cpuSampler('beam.smp');
  const redis = cpuSampler('redis-server');
  const srv0 = opts.serverCpuUs ? await opts.serverCpuUs() : null;
  const rabbit0 = rabbit?.();
  const redis0 = redis?.();
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  const errors = await drive(call, concurrency, calls, latNs);
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  const cpu = process.cpuUsage(cpu0);
  const perCall = (sample: (() => number) | undefined, before: number | undefined): number | null =>
    sample && before !== undefined ? (sample() - before) / calls : null;
  const rabbitCpuUsPerCall = perCall(rabbit, rabbit0);
  const redisCpuUsPerCall = perCall(redis, redis0);
  const srv1 = opts.serverCpuUs && srv0 !== null ? await opts.serverCpuUs() : null;

  const sorted = latNs.subarray(0, calls - errors).sort();
  return {
    calls,
    errors,
    seconds,
    callsPerSec: (calls - errors) / seconds,
    p50Ms: percentileMs(sorted, 50),
    p90Ms: percentileMs(sorted, 90),
    p99Ms: percentileMs(sorted, 99),
    cpuUsPerCall: (cpu.user + cpu.system) / calls,
    serverCpuUsPerCall: srv0 !== null && srv1 !== null ? (srv1 - srv0) / calls : null,
    rabbitCpuUsPerCall,
    redisCpuUsPerCall,
    rssMb: process.memoryUsage().rss / (1024 * 1024),
  };
}

export interface TargetPlan {
  concurrencies: readonly number[];
  callsFor: (concurrency: number) => number;
  warmupFor: (concurrency: number) => number;
  /** Called after each row, e.g. to print progress. */
  onResult?: ((r: BenchResult) => void) | undefined;
}

/** Starts a target, runs every concurrency level against it, and always stops it. */
export async function benchTarget(target: BenchTarget, plan: TargetPlan): Promise<BenchResult[]> {
  const session = await target.start();
  const out: BenchResult[] = [];
  try {
    for (const concurrency of plan.concurrencies) {
      const warmupCalls = plan.warmupFor(concurrency);
      const calls = plan.callsFor(concurrency);
      const r = await runLoad(session.call, { concurrency, calls, warmupCalls, serverCpuUs: session.serverCpuUs });
      const row: BenchResult = { target: target.name, concurrency, warmupCalls, ...r };
      out.push(row);
      plan.onResult?.(row);
    }
  } finally {
    await session.stop();
  }
  return out;
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
  ['RabbitMQ CPU µs/call', (r) => (r.rabbitCpuUsPerCall === null ? '-' : r.rabbitCpuUsPerCall.toFixed(1))],
  ['Redis CPU µs/call', (r) => (r.redisCpuUsPerCall === null ? '-' : r.redisCpuUsPerCall.toFixed(1))],
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
