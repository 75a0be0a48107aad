/** One measured scenario: calls driven in a closed loop, each process's figures per call. */
import { countsDelta, waitFor, type Counts } from '@warren/testkit';
import type { CallPath, Meters } from './rig';
import { traceSyscalls } from './strace';

/** Runs `concurrency` loops, each awaiting one call at a time, until `calls` have completed; any failure fails the run. */
export async function drive(call: () => Promise<void>, concurrency: number, calls: number): Promise<void> {
  let issued = 0;
  const loop = async (): Promise<void> => {
    while (issued < calls) {
      issued++;
      await call();
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, calls) }, loop));
}

// What a call does after its caller has the answer (a reply's ack, a tracked call's finish in Redis) lands
// within milliseconds; a window ends once every process has been quiet this long.
const QUIET_MS = 150;

async function quiet(all: readonly Meters[]): Promise<void> {
  await waitFor(() => all.every((m) => m.idleMs() >= QUIET_MS), { timeoutMs: 20_000, intervalMs: 20, message: `${QUIET_MS} ms without a byte on any proxy` });
}

export interface PerCall {
  readonly caller: Counts;
  readonly service: Counts;
  /**
   * The measured window (first snapshot to last) in seconds per call: work on a clock rather than per
   * call (heartbeats, announcements, the availability check's passive declare, lease ticks) grows with it.
   */
  readonly seconds: number;
}

function perCall(delta: Counts, calls: number): Counts {
  return Object.fromEntries(Object.entries(delta).map(([name, v]) => [name, v / calls]));
}

/** Warms the path up, then counts what `calls` calls cost each side, per call. */
export async function measure(path: CallPath, all: readonly Meters[], opts: { concurrency: number; calls: number; warmup: number }): Promise<PerCall> {
  await drive(path.call, opts.concurrency, opts.warmup);
  await quiet(all);
  const before = { caller: path.caller.snapshot(), service: path.service.snapshot() };
  const started = performance.now();
  await drive(path.call, opts.concurrency, opts.calls);
  await quiet(all);
  return {
    seconds: (performance.now() - started) / 1000 / opts.calls,
    caller: perCall(countsDelta(before.caller, path.caller.snapshot()), opts.calls),
    service: perCall(countsDelta(before.service, path.service.snapshot()), opts.calls),
  };
}

/** System calls per call of each side that runs in a process of its own (strace.ts), over `calls` calls after a warm-up. */
export async function measureSyscalls(path: CallPath, all: readonly Meters[], opts: { concurrency: number; calls: number; warmup: number }): Promise<Partial<Record<'caller' | 'service', Counts>>> {
  await drive(path.call, opts.concurrency, opts.warmup);
  await quiet(all);
  const sides = (['caller', 'service'] as const).flatMap((side) => (path[side].pid === undefined ? [] : [{ side, pid: path[side].pid }]));
  const tracers = await Promise.all(sides.map(async ({ side, pid }) => ({ side, tracing: await traceSyscalls(pid) })));
  const counted: Partial<Record<'caller' | 'service', Counts>> = {};
  try {
    await drive(path.call, opts.concurrency, opts.calls);
    await quiet(all);
  } finally {
    // Every tracer detaches, even when the calls failed: a tracer left attached would slow the process for good.
    for (const t of tracers) counted[t.side] = perCall(await t.tracing.stop(), opts.calls);
  }
  return counted;
}
