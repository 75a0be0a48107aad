// No orphans (issue 28, item 3): the children of `npm start` never outlive their supervisor.
// A SIGKILLed supervisor can say nothing; its children learn it from the end of the pipe on their
// stdin (supervisor-watch.ts) and drain and exit on their own. A SIGTERMed one, under load, waits
// for every child, each bounded by its drain timeout (SHUTDOWN_TIMEOUT_MS, 15 s) and the
// supervisor's own bound (20 s, after which it SIGKILLs what is left).
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { Teardown, amqpUrl, freePort, redisUrl, waitFor } from '@warren/testkit';
import { TestNamespace } from '../support/amqp';
import { deleteRedisKeys, repoRoot } from './helpers';

const td = new Teardown();
afterAll(() => td.run());

/** Alive and not a zombie (an orphan's zombie is its new parent's to reap, and serves nothing). */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

/** The supervisor's children that run a main (tsx's own esbuild helper is a child too). */
function childPids(pid: number): number[] {
  try {
    const pids = execFileSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' }).split('\n').filter(Boolean).map(Number);
    return pids.filter((p) => readFileSync(`/proc/${p}/cmdline`, 'utf8').includes('/src/main.ts'));
  } catch {
    return [];
  }
}

interface Started {
  readonly supervisor: ChildProcess;
  readonly pid: number;
  readonly children: number[];
  readonly port: number;
  readonly lines: string[];
}

/** `npm start`'s script in a process group of its own (as a shell runs a job), ready, with its six children's pids. */
async function startAll(): Promise<Started> {
  const ns = new TestNamespace();
  for (const s of ['calculator', 'audit', 'jobs', 'warren-broker']) ns.service(s);
  td.add(() => ns.destroy());
  td.add(() => deleteRedisKeys(ns.namespace));
  const port = await freePort();
  const supervisor = spawn(process.execPath, ['--import', 'tsx', path.join(repoRoot, 'scripts', 'start.ts')], {
    cwd: repoRoot,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, AMQP_URL: amqpUrl(), REDIS_URL: redisUrl(), WARREN_NAMESPACE: ns.namespace, GATEWAY_PORT: String(port), WARREN_OPS_PORT: 'off', LOG_LEVEL: 'info', LOG_FORMAT: 'json', GATEWAY_AUTH: 'none' },
  });
  const pid = supervisor.pid ?? 0;
  const lines: string[] = [];
  createInterface({ input: supervisor.stdout! }).on('line', (l) => lines.push(l));
  createInterface({ input: supervisor.stderr! }).on('line', (l) => lines.push(l));
  const children: number[] = [];
  td.add(() => {
    for (const p of [pid, ...children]) {
      try {
        process.kill(p, 'SIGKILL');
      } catch {
        // gone already, as it should be
      }
    }
  });
  await waitFor(async () => (await add(port).catch(() => undefined)) === 9, { timeoutMs: 30_000, intervalMs: 200, message: 'npm start answers' });
  await waitFor(() => lines.filter((l) => l.includes('"msg":"service ready"')).length === 5, { timeoutMs: 30_000, message: 'every service ready' });
  children.push(...childPids(pid));
  expect(children).toHaveLength(6);
  return { supervisor, pid, children, port, lines };
}

async function add(port: number): Promise<unknown> {
  const res = await fetch(`http://127.0.0.1:${port}/rpc`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"jsonrpc":"2.0","method":"add","params":[4,5],"id":1}' });
  return ((await res.json()) as { result?: unknown }).result;
}

it('SIGKILL of the supervisor: every child notices its pipe closed, drains and exits within 5 s', async () => {
  const { supervisor, pid, children } = await startAll();
  const exited = once(supervisor, 'exit');
  process.kill(pid, 'SIGKILL');
  await exited;
  const killedAt = Date.now();
  await waitFor(() => children.every((p) => !alive(p)), { timeoutMs: 5000, intervalMs: 50, message: `children of a SIGKILLed supervisor still running: ${children.filter(alive).join(', ')}` });
  console.log(`all 6 children gone ${Date.now() - killedAt} ms after the supervisor's SIGKILL`);
}, 90_000);

it('SIGTERM of the supervisor under load: it waits for every child, and all exit within the documented 20 s bound', async () => {
  const { supervisor, pid, children, port, lines } = await startAll();
  let stop = false;
  let answered = 0;
  // 64 callers in a loop over the gateway until everything is gone.
  const load = Array.from({ length: 64 }, async () => {
    while (!stop) {
      if ((await add(port).catch(() => undefined)) === 9) answered++;
      else await new Promise((r) => setTimeout(r, 20));
    }
  });
  await waitFor(() => answered >= 500, { timeoutMs: 30_000, message: 'load running' });
  const exited = once(supervisor, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  const termAt = Date.now();
  process.kill(pid, 'SIGTERM');
  const [code] = await exited;
  const tookMs = Date.now() - termAt;
  stop = true;
  await Promise.all(load);
  // The supervisor exits only once its children have: none is left behind, at the moment it ends.
  expect(children.filter(alive)).toEqual([]);
  expect(code).toBe(0);
  expect(tookMs).toBeLessThan(20_000);
  expect(lines.filter((l) => l.includes('"msg":"service stopped"'))).toHaveLength(5);
  expect(lines.filter((l) => l.includes('"msg":"broker stopped"'))).toHaveLength(1);
  console.log(`SIGTERM under load (${answered} calls answered): supervisor and all 6 children gone after ${tookMs} ms`);
}, 90_000);
