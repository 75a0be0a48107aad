import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { EventEmitter } from 'node:events';
import type { Readable } from 'node:stream';

/** How a child ended; `error` is set only if it could not be spawned. */
export interface ChildExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  error?: Error;
}

/** A regex tested against each line, or a predicate. */
export type LineMatcher = RegExp | ((line: string) => boolean);

/** A running TypeScript child process, see {@link spawnTs}. */
export interface TsChild {
  readonly child: ChildProcessWithoutNullStreams;
  /** Emits `'line'` (stdout line), `'stderr'` (stderr line) and `'exit'` ({@link ChildExit}). */
  readonly stdoutLines: EventEmitter;
  /** Every stdout line so far. */
  readonly stdout: readonly string[];
  /** Every stderr line so far. */
  readonly stderr: readonly string[];
  /**
   * Resolves with the first stdout line after the previous match that matches;
   * rejects on timeout (default 10 s) or if the child exits first.
   */
  waitForLine(match: LineMatcher, timeoutMs?: number): Promise<string>;
  /** Sends `signal` (default SIGTERM) unless exited; resolves when it has exited. */
  kill(signal?: NodeJS.Signals): Promise<ChildExit>;
  /** Resolves (never rejects) once the process has exited and its output is read. */
  readonly exited: Promise<ChildExit>;
}

const TAIL = 20;

function eachLine(stream: Readable, onLine: (line: string) => void): void {
  let rest = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    const parts = (rest + chunk).split(/\r?\n/);
    rest = parts.pop() ?? '';
    for (const line of parts) onLine(line);
  });
  stream.on('end', () => {
    if (rest !== '') onLine(rest);
    rest = '';
  });
  stream.on('error', () => undefined);
}

function tester(match: LineMatcher): (line: string) => boolean {
  if (typeof match === 'function') return match;
  return (line) => {
    match.lastIndex = 0;
    return match.test(line);
  };
}

/**
 * Runs a TypeScript file in a separate Node process via tsx
 * (`node --import tsx file ...args`, env merged over `process.env`), so tests
 * can SIGKILL a worker mid-call and watch the broker recover. stdout and
 * stderr are always read (the child never blocks on a full pipe) and split
 * into lines. `tsx` is resolved from the working directory (the repo root).
 */
export function spawnTs(file: string, args: readonly string[] = [], env: Record<string, string> = {}): TsChild {
  const child = spawn(process.execPath, ['--import', 'tsx', file, ...args], {
    env: { ...process.env, ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  child.stdin.on('error', () => undefined);
  const events = new EventEmitter();
  const stdout: string[] = [];
  const stderr: string[] = [];
  let exit: ChildExit | undefined;
  let cursor = 0;

  eachLine(child.stdout, (line) => {
    stdout.push(line);
    events.emit('line', line);
  });
  eachLine(child.stderr, (line) => {
    stderr.push(line);
    events.emit('stderr', line);
  });

  const exited = new Promise<ChildExit>((resolve) => {
    const settle = (info: ChildExit): void => {
      if (exit !== undefined) return;
      exit = info;
      events.emit('exit', info);
      resolve(info);
    };
    child.on('close', (code, signal) => settle({ code, signal }));
    child.on('error', (error) => {
      if (child.pid === undefined) settle({ code: null, signal: null, error });
    });
  });

  const describe = (match: LineMatcher): string =>
    `${typeof match === 'function' ? 'predicate' : String(match)} from ${file}; stdout tail: ${JSON.stringify(stdout.slice(-TAIL))}; stderr tail: ${JSON.stringify(stderr.slice(-TAIL))}`;

  const waitForLine = (match: LineMatcher, timeoutMs = 10_000): Promise<string> =>
    new Promise<string>((resolve, reject) => {
      const test = tester(match);
      for (let i = cursor; i < stdout.length; i += 1) {
        const line = stdout[i];
        if (line !== undefined && test(line)) {
          cursor = i + 1;
          resolve(line);
          return;
        }
      }
      cursor = stdout.length;
      if (exit !== undefined) {
        reject(new Error(`waitForLine: child already exited (${JSON.stringify(exit)}) without ${describe(match)}`));
        return;
      }
      const cleanup = (): void => {
        clearTimeout(timer);
        events.off('line', onLine);
        events.off('exit', onExit);
      };
      const onLine = (line: string): void => {
        if (!test(line)) return;
        cursor = stdout.length;
        cleanup();
        resolve(line);
      };
      const onExit = (info: ChildExit): void => {
        cleanup();
        reject(new Error(`waitForLine: child exited (${JSON.stringify(info)}) before ${describe(match)}`));
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`waitForLine timed out after ${timeoutMs} ms waiting for ${describe(match)}`));
      }, timeoutMs);
      events.on('line', onLine);
      events.on('exit', onExit);
    });

  const kill = (signal: NodeJS.Signals = 'SIGTERM'): Promise<ChildExit> => {
    if (exit === undefined && child.exitCode === null && child.signalCode === null) {
      try {
        child.kill(signal);
      } catch {
        // Already gone.
      }
    }
    return exited;
  };

  return { child, stdoutLines: events, stdout, stderr, waitForLine, kill, exited };
}
