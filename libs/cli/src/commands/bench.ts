import { wireErrorOf, type Params } from '@warren/jsonrpc';
import { ExitCode, UsageError, type ExitCodeValue } from '../errors';
import { SingleBar } from 'cli-progress';
import { table } from '../format';
import { parseParams } from '../params';
import type { Session } from '../session';

export interface BenchFlags {
  readonly concurrency: number;
  readonly calls: number;
  readonly method: string;
  readonly params?: string;
  readonly timeout?: number;
  /** Draw the progress bar on stderr. @default when stderr is a terminal and --json is off */
  readonly progress?: boolean;
}

export interface BenchReport {
  readonly method: string;
  readonly calls: number;
  readonly concurrency: number;
  readonly ok: number;
  readonly errors: number;
  /** Error answers by code. */
  readonly errorCodes: Readonly<Record<string, number>>;
  readonly durationMs: number;
  readonly callsPerSecond: number;
  /** Latency percentiles of successful calls, ms. */
  readonly latencyMs: { readonly p50: number; readonly p90: number; readonly p99: number; readonly max: number; readonly mean: number };
}

/** The value at quantile q (0..1) of an ascending array, nearest-rank; NaN for none. */
export function percentile(sorted: ArrayLike<number>, q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank] as number;
}

const round = (n: number): number => (Number.isFinite(n) ? Math.round(n * 100) / 100 : n);

/**
 * `warren bench`: `--calls` calls of `--method` with `--concurrency` of them in
 * flight at once, a progress bar on stderr (on a terminal), then a table of
 * calls/s and latency percentiles. Exits 1 when any call failed.
 */
export async function benchCommand(s: Session, flags: BenchFlags): Promise<ExitCodeValue> {
  let params: Params | undefined;
  if (flags.params !== undefined) {
    params = parseParams([flags.params]);
  } else if (flags.method === 'add') {
    params = [1, 2];
  }
  if (flags.concurrency > flags.calls) throw new UsageError('--concurrency must not exceed --calls');
  const client = await s.client();
  const latencies: number[] = [];
  const errorCodes: Record<string, number> = {};
  let issued = 0;
  let finished = 0;
  const showProgress = flags.progress ?? (s.io.stderr.isTTY === true && !s.settings.json);
  // cli-progress redraws on its own timer (10 a second), so a fast call loop costs nothing to show; into a
  // pipe (`--progress` without a terminal) it writes a line a second and the last one at the end.
  const bar = showProgress
    ? new SingleBar({
        stream: s.io.stderr as NodeJS.WriteStream,
        format: '[{bar}] {percentage}% {value}/{total}',
        barCompleteChar: '\u2588',
        barIncompleteChar: '\u2591',
        barsize: 30,
        fps: 10,
        hideCursor: true,
        noTTYOutput: true,
        notTTYSchedule: 1000,
      })
    : undefined;
  bar?.start(flags.calls, 0);
  const started = performance.now();
  const worker = async (): Promise<void> => {
    while (issued < flags.calls) {
      issued++;
      const t0 = performance.now();
      try {
        await client.call(flags.method, params, flags.timeout === undefined ? {} : { timeoutMs: flags.timeout });
        latencies.push(performance.now() - t0);
      } catch (err) {
        const code = String(wireErrorOf(err)?.code ?? 'local');
        errorCodes[code] = (errorCodes[code] ?? 0) + 1;
      }
      finished++;
      bar?.update(finished);
    }
  };
  try {
    await Promise.all(Array.from({ length: flags.concurrency }, worker));
  } finally {
    bar?.stop();
  }
  const durationMs = performance.now() - started;
  latencies.sort((a, b) => a - b);
  const errors = flags.calls - latencies.length;
  const report: BenchReport = {
    method: flags.method,
    calls: flags.calls,
    concurrency: flags.concurrency,
    ok: latencies.length,
    errors,
    errorCodes,
    durationMs: round(durationMs),
    callsPerSecond: round((flags.calls / durationMs) * 1000),
    latencyMs: {
      p50: round(percentile(latencies, 0.5)),
      p90: round(percentile(latencies, 0.9)),
      p99: round(percentile(latencies, 0.99)),
      max: round(percentile(latencies, 1)),
      mean: round(latencies.reduce((a, b) => a + b, 0) / Math.max(1, latencies.length)),
    },
  };
  if (s.settings.json) {
    s.out(JSON.stringify(report));
  } else {
    const ms = (n: number): string => (Number.isFinite(n) ? n.toFixed(2) : '-');
    s.out(
      table(
        ['method', 'calls', 'concurrency', 'errors', 'calls/s', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms'],
        [[report.method, String(report.calls), String(report.concurrency), errors > 0 ? s.c.red(String(errors)) : '0', report.callsPerSecond.toFixed(0), ms(report.latencyMs.p50), ms(report.latencyMs.p90), ms(report.latencyMs.p99), ms(report.latencyMs.max)]],
        s.c,
        new Set([1, 2, 3, 4, 5, 6, 7, 8]),
      ),
    );
    if (errors > 0) s.err(s.c.red(`errors by code: ${Object.entries(errorCodes).map(([code, n]) => `${code} ×${n}`).join(', ')}`));
  }
  return errors > 0 ? ExitCode.error : ExitCode.ok;
}
