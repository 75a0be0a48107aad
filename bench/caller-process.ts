/** The bench process's side of a caller process (bench/caller.ts): spawn it, drive it, stop it. */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import type { CallerSpec } from './callers';
import { drive, measure, type Measured } from './drive';
import { childCommand } from './children';

/** Runs the closed loop somewhere (a caller process, or this one) and reports what it measured. */
export interface LoadDriver {
  /** The process that makes the calls, for its system-call count. */
  readonly pid: number | undefined;
  warmup(concurrency: number, calls: number): Promise<number>;
  measure(concurrency: number, calls: number): Promise<Measured>;
  stop(): Promise<void>;
}


/**
 * Spawns a caller process for `spec` and waits until its client is connected. With `tree`, the caller
 * runs that checkout's client code (its bench/caller.ts, its `@warren/*` sources).
 */
export async function spawnCaller(spec: CallerSpec, readyTimeoutMs = 20_000, tree?: string): Promise<LoadDriver> {
  const command = childCommand('caller', 'caller', tree);
  const child = spawn(process.execPath, [...command.args, JSON.stringify(spec)], { stdio: ['pipe', 'pipe', 'inherit'], cwd: command.cwd });
  const exited = once(child, 'exit');
  const waiters: Array<{ resolve: (m: Record<string, unknown>) => void; reject: (err: Error) => void }> = [];
  void exited.then(([code]) => {
    for (const w of waiters.splice(0)) w.reject(new Error(`caller exited (code ${String(code)})`));
  });
  createInterface({ input: child.stdout }).on('line', (line) => waiters.shift()?.resolve(JSON.parse(line) as Record<string, unknown>));
  const next = (): Promise<Record<string, unknown>> => new Promise((resolve, reject) => waiters.push({ resolve, reject }));
  const ask = (message: object): Promise<Record<string, unknown>> => {
    const answer = next();
    child.stdin.write(JSON.stringify(message) + '\n');
    return answer;
  };
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.stdin.end();
    const killer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(killer);
  };
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([next(), new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('caller not ready in time')), readyTimeoutMs)))]);
  } catch (err) {
    await stop();
    throw err;
  } finally {
    clearTimeout(timer);
  }
  return {
    pid: child.pid,
    warmup: async (concurrency, calls) => Number((await ask({ op: 'warmup', concurrency, calls }))['errors']),
    measure: async (concurrency, calls) => (await ask({ op: 'measure', concurrency, calls })) as unknown as Measured,
    stop,
  };
}

/** A driver whose calls run in this process (for a target that cannot be split off). */
export function inProcessDriver(call: () => Promise<void>, stop: () => Promise<void>): LoadDriver {
  return {
    pid: process.pid,
    warmup: (concurrency, calls) => drive(call, concurrency, calls, null),
    measure: (concurrency, calls) => measure(call, concurrency, calls),
    stop,
  };
}
