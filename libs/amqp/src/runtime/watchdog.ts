// The last resort that ends a process whose main thread cannot: a tiny worker thread that SIGKILLs
// its own process once a shutdown has run past its bound, or once the supervisor is gone and the
// drain that should follow has not ended the process in time.
//
// Why a thread: a main thread can block for good where no timer, signal handler or pipe listener of
// its own will ever run again (issue 42: services under `node --import tsx` stuck in `Atomics.wait`
// after SIGTERM, a synchronous wait on a helper thread that never answered). SHUTDOWN_TIMEOUT_MS and
// the supervisor pipe both need that main thread; this does not. Its code is plain JavaScript run
// with `eval` and no inherited `execArgv`, so it needs neither tsx nor any module loaded after start;
// it learns the supervisor is gone by polling the parent pid (the kernel reparents an orphan), and it
// writes its one line with a synchronous write to fd 2 (a worker's `process.stderr` goes through the
// main thread). It is unref'd, so it never keeps a process alive, and stops when the shutdown ends.
import { Worker } from 'node:worker_threads';

export interface WatchdogOptions {
  /** Names the process in the watchdog's line. */
  readonly name: string;
  /** The main's own bound on a shutdown (SHUTDOWN_TIMEOUT_MS); the watchdog waits this plus `marginMs`. */
  readonly shutdownTimeoutMs: number;
  /** What the main gets beyond its own bound before the watchdog ends it. @default 5000 */
  readonly marginMs?: number;
  /**
   * Whether the parent process is a supervisor whose death must end this one (`npm start`'s children):
   * once the parent pid changes, the process has `shutdownTimeoutMs + marginMs` to exit. @default false
   */
  readonly watchParent?: boolean;
  /** How often the thread looks at the clock and the parent pid. @default 250 */
  readonly pollMs?: number;
}

/** A started watchdog. */
export interface Watchdog {
  /** Tells the thread a shutdown started now: the process must be gone within the bound. Idempotent. */
  shutdownStarted(): void;
  /** Stops the thread (the shutdown is over and the main exits on its own); idempotent. */
  close(): void;
}

/** Default time a main gets beyond its own shutdown bound. */
export const defaultWatchdogMarginMs = 5000;

// Plain CommonJS for `new Worker(..., { eval: true })`: every module it uses is required here, at start.
const threadCode = `
const { workerData, parentPort } = require('node:worker_threads');
const { writeSync } = require('node:fs');
const { name, boundMs, watchParent, parentPid, pollMs } = workerData;
let deadline;
let why;
const arm = (reason) => { if (deadline === undefined) { deadline = Date.now() + boundMs; why = reason; } };
parentPort.on('message', (m) => { if (m === 'shutdown') arm('a shutdown'); });
setInterval(() => {
  if (watchParent && process.ppid !== parentPid) arm('the supervisor\\'s death (parent ' + parentPid + ' gone)');
  if (deadline === undefined || Date.now() < deadline) return;
  const line = { level: 60, time: Date.now(), pid: process.pid, name, component: 'watchdog', boundMs, msg: 'still running ' + boundMs + ' ms after ' + why + '; the main thread is stuck: SIGKILL' };
  try { writeSync(2, JSON.stringify(line) + '\\n'); } catch {}
  process.kill(process.pid, 'SIGKILL');
}, pollMs);
`;

/**
 * Starts the watchdog thread. Call it once the process runs (a main's start), tell it when a
 * shutdown starts, close it when the shutdown is over.
 *
 * @example
 * const dog = startWatchdog({ name: 'calculator', shutdownTimeoutMs: 15_000, watchParent: supervised });
 * process.on('SIGTERM', () => { dog.shutdownStarted(); stop('SIGTERM'); });
 * // ... once closed: dog.close(); process.exit(code);
 */
export function startWatchdog(options: WatchdogOptions): Watchdog {
  const workerData = {
    name: options.name,
    boundMs: options.shutdownTimeoutMs + (options.marginMs ?? defaultWatchdogMarginMs),
    watchParent: options.watchParent ?? false,
    parentPid: process.ppid,
    pollMs: options.pollMs ?? 250,
  };
  // execArgv []: not `--import tsx` again in the thread (it writes only to fd 2, never through the main thread).
  const worker = new Worker(threadCode, { eval: true, execArgv: [], workerData });
  worker.unref();
  // A thread that failed to start is no reason to fail the service; it only loses its last resort.
  worker.on('error', () => undefined);
  let started = false;
  let closed = false;
  return {
    shutdownStarted: () => {
      if (started || closed) return;
      started = true;
      worker.postMessage('shutdown');
    },
    close: () => {
      if (closed) return;
      closed = true;
      void worker.terminate();
    },
  };
}
