/**
 * Plain-amqplib request/reply baseline target: a child-process "add" server
 * (amqp-baseline-server.ts) and a client in a caller process of its own (callers.ts) using
 * direct reply-to or a named reply queue.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { randomBytes } from 'node:crypto';
import { createInterface } from 'node:readline';
import type { BenchSession, BenchTarget } from './harness';
import { spawnCaller, type LoadDriver } from './caller-process';
import type { CallerSpec } from './callers';
import { processRssMb } from './proc-stats';
import { childCommand, type ChildProgram } from './children';
import { nodeArgs } from './profile';
import { amqpUrl } from '@warren/testkit';

export const AMQP_URL = amqpUrl();

export interface AmqpBaselineOptions {
  reply: 'direct' | 'named';
  /** Per-call timeout (ms). Default 10 000. */
  timeoutMs?: number;
}

/** Unique per run: pid + random suffix. */
export function uniqueName(prefix: string): string {
  return `${prefix}.${process.pid}.${randomBytes(4).toString('hex')}`;
}

export interface ServerChild {
  serverCpuUs: () => Promise<number>;
  serverRssMb: () => number | null;
  pid: number | undefined;
  stop: () => Promise<void>;
}

/**
 * Spawns a server program and waits for its `ready` line. `tree` is the checkout whose build it runs
 * (a base tree, for before/after; see children.ts).
 */
export async function spawnServer(program: ChildProgram, args: readonly string[], readyTimeoutMs = 20_000, tree?: string): Promise<ServerChild> {
  const command = childCommand(program, 'service', tree);
  const child = spawn(process.execPath, [...command.args, ...args], { stdio: ['pipe', 'pipe', 'inherit'], cwd: command.cwd });
  const cpuWaiters: Array<(us: number) => void> = [];
  const exited = once(child, 'exit');
  let onReady: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => (onReady = resolve));

  // What node itself prints for BENCH_NODE_ARGS (--trace-gc, --log-deopt, ...) goes to the bench's stderr.
  const echo = nodeArgs().length > 0;
  createInterface({ input: child.stdout }).on('line', (line) => {
    if (line === 'ready') onReady();
    else if (line.startsWith('cpu ')) cpuWaiters.shift()?.(Number(line.slice(4)));
    else if (echo) process.stderr.write(`[${program}] ${line}\n`);
  });

  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const killer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(killer);
  };

  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      ready,
      exited.then(([code]) => Promise.reject(new Error(`server exited before ready (code ${String(code)})`))),
      new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('server not ready in time')), readyTimeoutMs))),
    ]);
  } catch (err) {
    await stop();
    throw err;
  } finally {
    clearTimeout(timer);
  }

  const serverCpuUs = (): Promise<number> =>
    new Promise((resolve) => {
      cpuWaiters.push(resolve);
      child.stdin.write('cpu\n');
    });
  return { serverCpuUs, serverRssMb: () => processRssMb(child.pid), pid: child.pid, stop };
}

async function startBaseline(opts: AmqpBaselineOptions): Promise<BenchSession> {
  const requestQueue = uniqueName('bench.amqp.rpc');
  const server = await spawnServer('amqp-baseline-server', [requestQueue]);
  return sessionOf(server, {
    kind: 'amqp',
    reply: opts.reply,
    requestQueue,
    replyQueue: opts.reply === 'named' ? uniqueName('bench.amqp.reply') : undefined,
    timeoutMs: opts.timeoutMs ?? 10_000,
  });
}

/**
 * A target's session over a started service: its caller spawned for `spec` (the service stopped if the
 * caller cannot start), and a stop that stops the caller, then the service, which deletes what it declared.
 */
export async function sessionOf(server: ServerChild, spec: CallerSpec): Promise<BenchSession> {
  let driver: LoadDriver;
  try {
    driver = await spawnCaller(spec);
  } catch (err) {
    await server.stop();
    throw err;
  }
  const stop = async (): Promise<void> => {
    try {
      await driver.stop();
    } finally {
      await server.stop();
    }
  };
  return { driver, stop, serverCpuUs: server.serverCpuUs, serverRssMb: server.serverRssMb, serverPid: server.pid };
}

export function amqpBaseline(opts: AmqpBaselineOptions): BenchTarget {
  return { name: `amqp-${opts.reply}`, start: () => startBaseline(opts) };
}
