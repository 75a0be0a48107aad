// A whole `npm start` stack as a person runs it (npm, its shell, tsx, the supervisor, six children and
// their helpers), in a process group of its own as a shell runs a job, for the tests that stop it
// (start-stops.int.test.ts) or run two side by side (start-two-stacks.int.test.ts). Each stack has its
// own namespace and gateway port and nothing else set, so ops ports are picked as for a user.
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { amqpUrl, freePort, redisUrl, waitFor, type Teardown } from '@warren/testkit';
import { TestNamespace } from '../support/amqp';
import { deleteRedisKeys, repoRoot } from './helpers';

export interface Stack {
  readonly npm: ChildProcess;
  readonly port: number;
  readonly namespace: string;
  /** Every line the stack printed (stdout and stderr). */
  readonly lines: string[];
  /** Its processes once ready: npm and everything under it. */
  readonly tree: readonly number[];
  /** Their process groups: npm's, and each child's own. */
  readonly groups: ReadonlySet<number>;
}

/** pid → [ppid, pgid, state] of every process now. */
function table(): Map<number, [number, number, string]> {
  const rows = new Map<number, [number, number, string]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      rows.set(Number(entry), [Number(fields[1]), Number(fields[2]), fields[0] ?? '']);
    } catch {
      // gone between the listing and the read
    }
  }
  return rows;
}

/** Every live (not zombie) descendant of `root` and `root` itself. */
export function processTree(root: number): number[] {
  const rows = table();
  const found = [root];
  for (let i = 0; i < found.length; i++) for (const [pid, [ppid, , state]] of rows) if (ppid === found[i] && state !== 'Z') found.push(pid);
  return found.filter((pid) => rows.has(pid) && rows.get(pid)?.[2] !== 'Z');
}

/** The stack's processes still alive: those seen in its tree, and anything now in one of their process groups. */
export function survivors(seen: readonly number[], groups: ReadonlySet<number>): number[] {
  const rows = table();
  const alive = new Set(seen.filter((pid) => rows.has(pid) && rows.get(pid)?.[2] !== 'Z'));
  for (const [pid, [, pgid, state]] of rows) if (groups.has(pgid) && state !== 'Z') alive.add(pid);
  return [...alive];
}

/** The process groups of `pids` (each child of npm start has one of its own). */
export function groupsOf(pids: readonly number[]): Set<number> {
  const rows = table();
  return new Set(pids.map((pid) => rows.get(pid)?.[1]).filter((g): g is number => g !== undefined && g > 1));
}

/** A line that is `name | {json}` with this `msg`. */
export const logged = (lines: readonly string[], msg: string): string[] => lines.filter((l) => l.includes(`"msg":"${msg}"`));

/** POST /rpc `add` [4, 5] through the stack's gateway: 9, or undefined while it cannot answer. */
export async function add(port: number): Promise<unknown> {
  const res = await fetch(`http://127.0.0.1:${port}/rpc`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"jsonrpc":"2.0","method":"add","params":[4,5],"id":1}' });
  return ((await res.json()) as { result?: unknown }).result;
}

/**
 * `npm start` with only its namespace and gateway port set (and LOG_FORMAT=json to read its lines), ready:
 * the gateway answers `add` and all five services said "service ready". SIGKILLed with its whole tree at teardown.
 */
export async function startStack(td: Teardown, extraEnv: Record<string, string> = {}): Promise<Stack> {
  const ns = new TestNamespace();
  for (const s of ['calculator', 'audit', 'jobs', 'warren-broker']) ns.service(s);
  td.add(() => ns.destroy());
  td.add(() => deleteRedisKeys(ns.namespace));
  const port = await freePort();
  const env: NodeJS.ProcessEnv = { ...process.env, AMQP_URL: amqpUrl(), REDIS_URL: redisUrl(), WARREN_NAMESPACE: ns.namespace, GATEWAY_PORT: String(port), LOG_FORMAT: 'json', ...extraEnv };
  // Whatever the test's own environment says about ops ports, a user's stack sets none.
  delete env['WARREN_OPS_PORT'];
  const npm = spawn('npm', ['start', '--silent'], { cwd: repoRoot, detached: true, stdio: ['ignore', 'pipe', 'pipe'], env });
  const lines: string[] = [];
  createInterface({ input: npm.stdout! }).on('line', (l) => lines.push(l));
  createInterface({ input: npm.stderr! }).on('line', (l) => lines.push(l));
  const pid = npm.pid ?? 0;
  const tree = [pid];
  const groups = new Set([pid]);
  td.add(() => {
    for (const p of survivors(tree, groups)) {
      try {
        process.kill(p, 'SIGKILL');
      } catch {
        // gone already, as it should be
      }
    }
  });
  await waitFor(async () => (await add(port).catch(() => undefined)) === 9, { timeoutMs: 60_000, intervalMs: 250, message: `stack ${ns.namespace} answers add; last lines: ${lines.slice(-5).join('\n')}` });
  await waitFor(() => logged(lines, 'service ready').length === 5, { timeoutMs: 30_000, message: 'every service ready' });
  tree.push(...processTree(pid).filter((p) => p !== pid));
  for (const g of groupsOf(tree)) groups.add(g);
  return { npm, port, namespace: ns.namespace, lines, tree, groups };
}
