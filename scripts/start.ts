// `npm start`: the broker and the example services together, as separate
// processes the way they run in production, with their logs interleaved.
//
// RabbitMQ and Redis come from AMQP_URL / REDIS_URL, the default local ports,
// or testcontainers when Docker is reachable (scripts/ensure-services.ts). When
// none of these is there (or WARREN_EMBEDDED=1), everything runs embedded in
// this one process, in memory, and says so loudly (start-mode.ts, start-embedded.ts).
// Ctrl-C (SIGINT) or SIGTERM stops every process gracefully: each child runs
// in a process group of its own, so the terminal's signal (sent to the whole
// foreground group) reaches only this script, which forwards exactly one
// SIGTERM to each child; a child given two signals would skip its drain.
// No orphans: each child's stdin is a pipe this script holds and never writes
// (WARREN_SUPERVISOR=stdin); when this script dies, even by SIGKILL, the kernel
// closes it, the child reads end-of-file and drains as on SIGTERM
// (libs/amqp/src/runtime/supervisor-watch.ts). A child's drain is bounded by its
// SHUTDOWN_TIMEOUT_MS (15 s; the broker's 15 s): calls still unacknowledged then
// are redelivered. This script waits for every child, and SIGKILLs (with its process
// group) any still there after childBoundMs, saying which and after how long, then exits.
// Each child also runs a watchdog thread that ends it should its main thread block for
// good (libs/amqp/src/runtime/watchdog.ts), even once this script is gone.
// A child an operator drained (`warren worker drain`) exits drainedExitCode: said, not restarted, and the
// others keep running. Children run as `node --require tsx/cjs` (see start()).
// Logs are pretty on a terminal, JSON otherwise (LOG_FORMAT, log-format.ts).
// `npm start -- --watch` (RabbitMQ mode only) restarts the processes whose sources changed
// (watch.ts): a service's src/ restarts that service's processes alone, the broker's its own, a
// library's every process; the others, and RabbitMQ and Redis, keep running. A restarted process
// gets one SIGTERM and drains as on Ctrl-C; one that crashes waits for the next change instead
// of stopping everything. A service's instances restart one after another, each ready before the
// next stops (rolling-restart.ts). The project's own services, listed in warren.config.json at the
// root (project-config.ts), run beside the example ones.
// Each service answers /metrics, /healthz and /readyz on an ops port of its own: 9464, 9465, ...
// in the order below, or the next free ones when another stack holds those (WARREN_OPS_PORT moves the
// base, `off` turns them off; start-ops.ts).
import { spawn, type ChildProcess } from 'node:child_process';
import { drainedExitCode } from '@warren/amqp';
import { existsSync, readdirSync } from 'node:fs';
import { once } from 'node:events';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { defaultUrls } from './ensure-services';
import { runEmbedded } from './start-embedded';
import { chooseStartMode } from './start-mode';
import { lineFormatter, logFormat } from './log-format';
import { watchTrees } from './watch';
import { rollingRestarter, whenReady } from './rolling-restart';
import { freeOpsPorts } from './start-ops';
import { projectProcesses, type StartProcess } from './project-config';

const root = path.resolve(__dirname, '..');

/** What runs, and how many of each. Every process gets the same environment, but for its INSTANCE_ID and ops port. */
const builtIn: readonly StartProcess[] = [
  { name: 'broker', file: 'broker/src/main.ts' },
  { name: 'calculator-1', file: 'services/calculator/src/main.ts', env: { INSTANCE_ID: 'calculator-1' } },
  { name: 'calculator-2', file: 'services/calculator/src/main.ts', env: { INSTANCE_ID: 'calculator-2' } },
  { name: 'audit', file: 'services/audit/src/main.ts' },
  { name: 'jobs-1', file: 'services/jobs/src/main.ts', env: { INSTANCE_ID: 'jobs-1' } },
  { name: 'jobs-2', file: 'services/jobs/src/main.ts', env: { INSTANCE_ID: 'jobs-2' } },
];
/** The built-in processes and the project's own from warren.config.json (project-config.ts); set by main. */
let processes: readonly StartProcess[] = builtIn;

const children = new Map<string, ChildProcess>();
let stopping = false;
/** Set by --watch: a child that exits is waited on, not a reason to stop everything. */
let watching = false;
/** Children being restarted: their exit is expected. */
const restarting = new Set<string>();
const format = lineFormatter(logFormat(process.env, process.stdout.isTTY === true), process.stdout.isTTY === true && !process.env['NO_COLOR']);

/** Each service's ops port (the broker serves /metrics on its gateway), from WARREN_OPS_PORT (start-ops.ts); set by main. */
let ops: Record<string, string> = {};

function start(name: string, file: string, env: Record<string, string> = {}): ChildProcess {
  // detached: a process group of its own, out of reach of the terminal's Ctrl-C (see the top).
  // stdin: the lifeline pipe (see the top); nothing is written to it.
  // --require tsx/cjs: TypeScript compiled by a require hook on the main thread. `--import tsx` would run
  // tsx's loader hooks on a thread of their own, which a module loaded late (on a shutdown path) waits
  // for in Atomics.wait (issue 42); the repository is CommonJS, so the ESM hooks buy nothing here.
  const child = spawn(process.execPath, ['--require', 'tsx/cjs', path.join(root, file)], { cwd: root, env: { ...process.env, ...env, ...(name in ops ? { WARREN_OPS_PORT: ops[name] } : {}), WARREN_SUPERVISOR: 'stdin' }, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
  // A child gone first closes its end; writing nothing, this script would only see EPIPE here.
  child.stdin?.on('error', () => undefined);
  children.set(name, child);
  createInterface({ input: child.stdout }).on('line', (line) => process.stdout.write(format(name, line)));
  createInterface({ input: child.stderr }).on('line', (line) => process.stderr.write(format(name, line)));
  child.on('exit', (code, signal) => {
    children.delete(name);
    if (restarting.has(name) && !stopping) return;
    if (!stopping && code === drainedExitCode) {
      // An operator's `warren worker drain`: the rest keeps running, and it is not restarted.
      process.stderr.write(`${name.padEnd(12)} | drained by an operator and exited; the others keep running\n`);
      if (children.size === 0) void stop(0);
      return;
    }
    if (!stopping && watching) {
      process.stderr.write(`${name.padEnd(12)} | exited (${signal ?? code}); restarts on the next change to its sources\n`);
      return;
    }
    if (!stopping) {
      process.stderr.write(`${name.padEnd(12)} | exited (${signal ?? code}); stopping everything\n`);
      void stop(1);
      return;
    }
    // A child that did not drain cleanly makes the whole run fail.
    if (code !== 0 && code !== drainedExitCode) exitCode = 1;
    if (children.size === 0) process.exit(exitCode);
  });
  return child;
}

/** A child still running this long after its SIGTERM is killed: above every child's own drain bound (15 s). */
const childBoundMs = 20_000;

/**
 * The supervisor's last word to a child that outlived its bound: says so (which child, after how long), then
 * SIGKILLs its whole process group (the child and any helper of its own, such as tsx's esbuild service).
 */
function escalate(name: string, child: ChildProcess, sinceMs: number): void {
  if (child.exitCode !== null || child.signalCode !== null) return;
  process.stderr.write(`${name.padEnd(12)} | still running ${Math.round((Date.now() - sinceMs) / 100) / 10} s after its SIGTERM (bound ${childBoundMs / 1000} s); sending SIGKILL\n`);
  try {
    // detached: its pid is its group's id (never 0 here: a child that failed to spawn has exited already).
    if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
  } catch {
    child.kill('SIGKILL');
  }
}

let exitCode = 0;
async function stop(code: number): Promise<void> {
  if (stopping) return;
  stopping = true;
  exitCode = code;
  // One SIGTERM each: a child being restarted has had its own already (a second one would skip its drain).
  for (const [name, child] of children) if (!restarting.has(name)) child.kill('SIGTERM');
  if (children.size === 0) process.exit(exitCode);
  // Each process drains its own work; this only bounds a process that hangs.
  const termAt = Date.now();
  setTimeout(() => {
    for (const [name, child] of children) escalate(name, child, termAt);
    process.exit(1);
  }, childBoundMs).unref();
}

/** Stops `name` (one SIGTERM, its drain bounded as on Ctrl-C); resolves once it is gone. */
async function stopForRestart(name: string): Promise<void> {
  const child = children.get(name);
  restarting.add(name);
  try {
    if (child !== undefined && child.exitCode === null && child.signalCode === null) {
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      const termAt = Date.now();
      const bound = setTimeout(() => escalate(name, child, termAt), childBoundMs);
      await exited;
      clearTimeout(bound);
    }
  } finally {
    restarting.delete(name);
  }
}

/** Starts `name` again, unless everything is stopping; resolves once it is ready, false when it exited instead (rolling-restart.ts). */
async function startAgain(name: string): Promise<boolean> {
  const p = processes.find((x) => x.name === name);
  if (p === undefined || stopping) return false;
  const child = start(p.name, p.file, p.env);
  const port = ops[name];
  await whenReady(child, { boundMs: childBoundMs, ...(port ? { opsUrl: `http://${process.env['WARREN_OPS_HOST'] || '127.0.0.1'}:${port}` } : {}) });
  return child.exitCode === null && child.signalCode === null;
}

/** A service's instances restart one after another (each ready before the next stops), services side by side. */
const roller = rollingRestarter({
  stop: stopForRestart,
  start: startAgain,
  onHalt: (name, kept) => process.stderr.write(`${'watch'.padEnd(12)} | ${name} did not come back; ${kept.join(', ')} keep running the code they started with until the next change\n`),
});

/** Watches each process's src/ and every library's; a change restarts the processes it feeds. */
function watchSources(): void {
  const libs = readdirSync(path.join(root, 'libs')).map((l) => `libs/${l}/src`).filter((t) => existsSync(path.join(root, t)));
  const own = [...new Set(processes.map((p) => path.dirname(p.file)))];
  watchTrees([...own, ...libs], (changed) => {
    const all = libs.some((t) => changed.has(t));
    const names = processes.filter((p) => all || changed.has(path.dirname(p.file))).map((p) => p.name);
    process.stdout.write(`${'watch'.padEnd(12)} | ${[...changed].sort().join(', ')} changed: restarting ${names.join(', ')}\n`);
    const groups = new Map<string, string[]>();
    for (const p of processes.filter((x) => names.includes(x.name))) groups.set(p.file, [...(groups.get(p.file) ?? []), p.name]);
    roller.request([...groups.values()]);
  }, { root });
  process.stdout.write(`warren: watching ${own.length + libs.length} source trees; a change restarts the processes it feeds\n`);
}

/** `npm start [-- --watch]`: the only argument there is. */
function parseArgs(argv: readonly string[]): { readonly watch: boolean } {
  const unknown = argv.filter((a) => a !== '--watch');
  if (unknown.length > 0) throw new RangeError(`unknown argument ${unknown.join(' ')} (npm start takes only -- --watch)`);
  return { watch: argv.includes('--watch') };
}

async function main(): Promise<void> {
  watching = parseArgs(process.argv.slice(2)).watch;
  processes = [...builtIn, ...projectProcesses(root, builtIn)];
  const mode = await chooseStartMode(process.env);
  // A local demo on loopback: without tokens it runs without auth, and says so (the broker
  // itself refuses to start without either). Set GATEWAY_TOKENS (client) and GATEWAY_OPERATOR_TOKENS (the console's) to try auth.
  if (!process.env['GATEWAY_TOKENS'] && !process.env['GATEWAY_OPERATOR_TOKENS']) process.env['GATEWAY_AUTH'] ||= 'none';
  if (mode.kind === 'embedded') {
    if (processes.length > builtIn.length) process.stderr.write(`warren: embedded mode runs the example services only; warren.config.json's (${processes.slice(builtIn.length).map((p) => p.name).join(', ')}) need RabbitMQ\n`);
    if (watching) throw new RangeError('--watch restarts services as processes of their own, and embedded mode runs them all in this one; run RabbitMQ and Redis (docs/embedded.md) to use it');
    return runEmbedded(mode.why, format);
  }
  const provided = mode.provided;
  const opsHost = process.env['WARREN_OPS_HOST'] || '127.0.0.1';
  // Free ones only: another stack on this machine may hold the first (start-ops.ts).
  ops = await freeOpsPorts(process.env, processes.filter((p) => p.name !== 'broker').map((p) => p.name), opsHost);
  // Every process gets both URLs explicitly: services track calls in Redis only when REDIS_URL is set.
  process.env['AMQP_URL'] ||= defaultUrls(process.env).rabbitmq;
  process.env['REDIS_URL'] ||= defaultUrls(process.env).redis;
  process.stdout.write(`warren: RabbitMQ ${provided.rabbitmq}, Redis ${provided.redis}, gateway auth ${process.env['GATEWAY_AUTH'] === 'none' ? 'off (GATEWAY_AUTH=none)' : 'on'}\n`);
  const opsList = Object.entries(ops).filter(([, port]) => port !== '');
  process.stdout.write(opsList.length === 0 ? 'warren: ops ports off (WARREN_OPS_PORT=off)\n' : `warren: ops ports (/metrics, /healthz, /readyz): ${opsList.map(([name, port]) => `${name} ${opsHost}:${port}`).join(', ')}\n`);
  // Before the children start: a signal in between must not kill this script and orphan them.
  process.on('SIGINT', () => void stop(0));
  process.on('SIGTERM', () => void stop(0));
  // This script dying without a signal it can handle (SIGKILL aside) still takes the children along.
  process.on('exit', () => {
    for (const child of children.values()) child.kill('SIGKILL');
  });
  for (const p of processes) start(p.name, p.file, p.env);
  if (watching) watchSources();
}

main().catch((err: unknown) => {
  process.stderr.write(`warren: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
