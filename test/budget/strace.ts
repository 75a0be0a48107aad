/**
 * System calls of a running process over a window, by `strace -c -f -p <pid>` (Debian's strace):
 * attached to every thread of it, detached by SIGINT, which makes strace print its summary. Reported
 * beside the budget, not budgeted: ptrace stops the process at every system call, so it runs slower
 * while counted and batches differently (and so in a pass of its own, never during the budget's window).
 */
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Counts } from '@warren/testkit';

/** Whether `strace` runs here and may trace this user's processes (synchronous, to choose `it` or `it.skip`). */
export function straceAvailable(): boolean {
  const probe = spawnSync('strace', ['-c', '-o', '/dev/null', 'true'], { timeout: 10_000, stdio: 'ignore' });
  return probe.error === undefined && probe.status === 0;
}

/** Parses strace's `-c` table: calls by system call, and `total` (their sum). */
export function parseStraceSummary(text: string): Counts {
  const counts: Counts = {};
  for (const line of text.split('\n')) {
    // % time     seconds  usecs/call     calls    errors syscall   (errors may be blank; usecs/call too in newer versions)
    const cells = line.trim().split(/\s+/);
    const name = cells.at(-1);
    if (name === undefined || cells.length < 4 || !/^[\d.]+$/.test(cells[0]!)) continue;
    const numbers = cells.slice(0, -1).map(Number);
    // calls is the 4th column whether or not errors is filled in.
    const calls = numbers[3];
    if (name !== 'total' && calls !== undefined && Number.isFinite(calls)) counts[name] = calls;
  }
  counts['total'] = Object.values(counts).reduce((a, b) => a + b, 0);
  return counts;
}

/** A tracer attached to `pid`; `stop()` detaches and resolves with its counts. */
export interface Tracing {
  stop(): Promise<Counts>;
}

export async function traceSyscalls(pid: number): Promise<Tracing> {
  const dir = mkdtempSync(join(tmpdir(), 'budget-strace-'));
  const out = join(dir, 'summary.txt');
  const tracer = spawn('strace', ['-c', '-f', '-p', String(pid), '-o', out], { stdio: ['ignore', 'ignore', 'pipe'] });
  const exited = once(tracer, 'exit');
  let stderr = '';
  tracer.stderr.setEncoding('utf8');
  // "strace: Process N attached with K threads" once every thread is attached: the window may begin.
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`strace did not attach to ${pid} in 10 s: ${stderr}`)), 10_000);
    tracer.stderr.on('data', (chunk: string) => {
      stderr += chunk;
      if (/attached/.test(stderr)) {
        clearTimeout(timer);
        resolve();
      }
    });
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`strace exited before attaching to ${pid}: ${stderr}`));
    });
  });
  return {
    async stop() {
      tracer.kill('SIGINT');
      await exited;
      try {
        return parseStraceSummary(readFileSync(out, 'utf8'));
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
