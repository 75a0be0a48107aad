// `npm start -- --watch` (issue 32, the dev loop): a change to one service's sources restarts that
// service's process alone, after a debounce (a burst of changes is one restart); the broker and
// the other services keep their processes, calls work after, and the supervisor still takes every
// child along when it stops.
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync, utimesSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { Teardown, amqpUrl, freePort, redisUrl, waitFor } from '@warren/testkit';
import { TestNamespace } from '../support/amqp';
import { deleteRedisKeys, repoRoot } from './helpers';

const td = new Teardown();
afterAll(() => td.run());

/** The supervisor's children running a main, by the file they run (tsx's esbuild helper is a child too). */
function mains(pid: number): Map<number, string> {
  let pids: number[] = [];
  try {
    pids = execFileSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' }).split('\n').filter(Boolean).map(Number);
  } catch {
    // no children
  }
  const found = new Map<number, string>();
  for (const p of pids) {
    try {
      const file = readFileSync(`/proc/${p}/cmdline`, 'utf8').split('\0').find((a) => a.endsWith('/src/main.ts'));
      if (file !== undefined) found.set(p, path.relative(repoRoot, file));
    } catch {
      // exited in between
    }
  }
  return found;
}

const pidsOf = (m: Map<number, string>, file: string): number[] => [...m].filter(([, f]) => f === file).map(([p]) => p).sort();

async function rpc(port: number, method: string, params: unknown): Promise<{ result?: unknown; error?: { code: number } }> {
  const res = await fetch(`http://127.0.0.1:${port}/rpc`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', method, params, id: 1 }) });
  return (await res.json()) as { result?: unknown; error?: { code: number } };
}

it('restarts the changed service alone, once per burst of changes; the others keep running and calls work after', async () => {
  const ns = new TestNamespace();
  for (const s of ['calculator', 'audit', 'jobs', 'warren-broker']) ns.service(s);
  td.add(() => ns.destroy());
  td.add(() => deleteRedisKeys(ns.namespace));
  const port = await freePort();
  const supervisor = spawn(process.execPath, ['--import', 'tsx', path.join(repoRoot, 'scripts', 'start.ts'), '--watch'], {
    cwd: repoRoot,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, AMQP_URL: amqpUrl(), REDIS_URL: redisUrl(), WARREN_NAMESPACE: ns.namespace, GATEWAY_PORT: String(port), LOG_LEVEL: 'info', LOG_FORMAT: 'json', GATEWAY_AUTH: 'none' },
  });
  const pid = supervisor.pid ?? 0;
  td.add(() => {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // gone already
    }
    for (const p of mains(pid).keys()) process.kill(p, 'SIGKILL');
  });
  const lines: string[] = [];
  createInterface({ input: supervisor.stdout! }).on('line', (l) => lines.push(l));
  createInterface({ input: supervisor.stderr! }).on('line', (l) => lines.push(l));
  const ready = (): number => lines.filter((l) => l.includes('"msg":"service ready"')).length;
  await waitFor(() => lines.some((l) => l.startsWith('warren: watching')), { timeoutMs: 90_000, message: 'the watcher started' });
  await waitFor(async () => (await rpc(port, 'add', [4, 5]).catch(() => undefined))?.result === 9, { timeoutMs: 90_000, intervalMs: 200, message: 'npm start answers' });
  await waitFor(() => ready() === 5, { timeoutMs: 60_000, message: 'every service ready' });
  const before = mains(pid);
  expect(before.size).toBe(6);
  const audit = pidsOf(before, 'services/audit/src/main.ts');
  expect(audit).toHaveLength(1);

  // Three files of the audit service saved at once (an editor's save-all): one restart after the debounce.
  const now = new Date();
  for (const f of ['main.ts', 'service.ts', 'methods.ts']) utimesSync(path.join(repoRoot, 'services', 'audit', 'src', f), now, now);
  await waitFor(() => ready() === 6, { timeoutMs: 60_000, message: 'audit ready again' });
  const after = mains(pid);
  const restartLines = lines.filter((l) => l.startsWith('watch') && l.includes('restarting'));
  expect(restartLines).toEqual([expect.stringMatching(/services\/audit\/src changed: restarting audit$/)]);
  // A new audit process; the broker's, the calculators' and the jobs' the same as before.
  expect(pidsOf(after, 'services/audit/src/main.ts')).toHaveLength(1);
  expect(pidsOf(after, 'services/audit/src/main.ts')).not.toEqual(audit);
  for (const file of ['broker/src/main.ts', 'services/calculator/src/main.ts', 'services/jobs/src/main.ts']) expect(pidsOf(after, file)).toEqual(pidsOf(before, file));
  expect(pidsOf(after, 'services/calculator/src/main.ts')).toHaveLength(2);
  expect(lines.filter((l) => l.includes('"msg":"service stopped"'))).toHaveLength(1);

  // Calls work after: the restarted service's own method, and the others'.
  await waitFor(async () => Array.isArray((await rpc(port, 'audit.recent', { limit: 1 }).catch(() => undefined))?.result), { timeoutMs: 30_000, intervalMs: 200, message: 'audit.recent answers after the restart' });
  await expect(rpc(port, 'add', [4, 5])).resolves.toMatchObject({ result: 9 });

  // The supervisor still stops every child, the restarted one included.
  const exited = once(supervisor, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  process.kill(pid, 'SIGTERM');
  const [code] = await exited;
  expect(code).toBe(0);
  for (const p of after.keys()) expect(() => process.kill(p, 0)).toThrow();
}, 180_000);

it('refuses --watch in embedded mode, and unknown arguments, with a clear message', async () => {
  for (const [args, expected] of [[['--watch'], /--watch restarts services as processes/], [['--wat'], /unknown argument --wat/]] as const) {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(repoRoot, 'scripts', 'start.ts'), ...args], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, WARREN_EMBEDDED: '1', GATEWAY_PORT: '0' } });
    td.add(() => child.kill('SIGKILL'));
    let err = '';
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    const [code] = (await once(child, 'exit')) as [number | null];
    expect(code).toBe(1);
    expect(err).toMatch(expected);
  }
}, 60_000);
