/** The closed loop a caller runs, and the latency figures it reports; shared by every caller process. */
import { percentile } from '@warren/cli';

/** Runs `concurrency` loops, each awaiting one call at a time, until `calls` have been issued and completed. */
export async function drive(call: () => Promise<void>, concurrency: number, calls: number, latNs: Float64Array | null): Promise<number> {
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

/** What one measured phase of a caller gives: its own figures, the ones only it can read. */
export interface Measured {
  readonly errors: number;
  readonly seconds: number;
  readonly p50Ms: number;
  readonly p90Ms: number;
  readonly p99Ms: number;
  /** The caller process's CPU time (user + system) during the phase, µs. */
  readonly cpuUs: number;
  /** The caller process's resident memory at the end of the phase, MB. */
  readonly rssMb: number;
}

/** Nearest-rank percentile of ascending-sorted nanoseconds, in ms (NaN when empty). */
const percentileMs = (sortedNs: Float64Array, p: number): number => percentile(sortedNs, p / 100) / 1e6;

/** Drives `calls` calls and measures them. */
export async function measure(call: () => Promise<void>, concurrency: number, calls: number): Promise<Measured> {
  const latNs = new Float64Array(calls);
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  const errors = await drive(call, concurrency, calls, latNs);
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  const cpu = process.cpuUsage(cpu0);
  const sorted = latNs.subarray(0, calls - errors).sort();
  return {
    errors,
    seconds,
    p50Ms: percentileMs(sorted, 50),
    p90Ms: percentileMs(sorted, 90),
    p99Ms: percentileMs(sorted, 99),
    cpuUs: cpu.user + cpu.system,
    rssMb: process.memoryUsage().rss / (1024 * 1024),
  };
}
