// A process that always exits (issue 42): `npm start` stopped six times as people and process managers
// stop it, each time with a job running (report.render, longer than any drain), alternating Ctrl-C
// (SIGINT to its process group) and a supervisor killed mid-drain (SIGTERM to the group, SIGKILL 2 s
// later). Every process of that stack (npm, its shell, tsx, the supervisor, the six children, their
// helpers) must be gone within 25 s of the stop, every time: the drains are bounded (15 s), the
// supervisor SIGKILLs a child past 20 s, and each child's watchdog thread ends it past 20 s of its own
// shutdown even when its main thread or its supervisor cannot.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Teardown, waitFor } from '@warren/testkit';
import { repoRoot } from './helpers';
import { logged, startStack, survivors, type Stack } from './stack';

const td = new Teardown();
afterAll(() => td.run());

const boundMs = 25_000;

/** Starts a job that outlives every drain, and resolves once a jobs worker runs it. */
async function jobRunning(stack: Stack): Promise<void> {
  const before = logged(stack.lines, 'render started').length;
  const call = fetch(`http://127.0.0.1:${stack.port}/rpc`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"jsonrpc":"2.0","method":"report.render","params":{"size":60},"id":7}' });
  // Its answer never comes (the stack is stopped under it); the request only has to be taken.
  void call.then((r) => r.text(), () => undefined);
  await waitFor(() => logged(stack.lines, 'render started').length > before, { timeoutMs: 20_000, message: 'the job started' });
}

async function stopAndCount(stack: Stack, how: 'ctrl-c' | 'term-then-kill'): Promise<number> {
  const group = stack.npm.pid ?? 0;
  const stoppedAt = Date.now();
  if (how === 'ctrl-c') process.kill(-group, 'SIGINT');
  else {
    process.kill(-group, 'SIGTERM');
    await new Promise((r) => setTimeout(r, 2000));
    // The supervisor (and npm, its shell, tsx) die mid-drain; the children are in groups of their own.
    process.kill(-group, 'SIGKILL');
  }
  await waitFor(() => survivors(stack.tree, stack.groups).length === 0, {
    timeoutMs: boundMs - (Date.now() - stoppedAt),
    intervalMs: 100,
    message: `${how}: still running ${boundMs / 1000} s after the stop: ${survivors(stack.tree, stack.groups).join(', ')}; last lines:\n${stack.lines.slice(-12).join('\n')}`,
  });
  return Date.now() - stoppedAt;
}

/** Every main loads nothing after its signal (test/fixtures/late-loads.cjs records what it would). */
function watchLateLoads(): { env: Record<string, string>; loaded: () => string[] } {
  const dir = mkdtempSync(path.join(tmpdir(), 'warren-late-'));
  td.add(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'late');
  const preload = path.join(repoRoot, 'test', 'fixtures', 'late-loads.cjs');
  return {
    env: { NODE_OPTIONS: `${process.env['NODE_OPTIONS'] ?? ''} --require ${preload}`.trim(), LATE_LOADS_FILE: file },
    loaded: () => readFileSync(file, { encoding: 'utf8', flag: 'a+' }).split('\n').filter(Boolean),
  };
}

it('six stops of npm start with a job running, Ctrl-C and a killed supervisor in turn: every process gone within 25 s each time, no module loaded after a signal', async () => {
  const took: string[] = [];
  const late = watchLateLoads();
  for (let round = 0; round < 6; round++) {
    const how = round % 2 === 0 ? 'ctrl-c' : 'term-then-kill';
    const stack = await startStack(td, late.env);
    expect(stack.tree.length).toBeGreaterThanOrEqual(10);
    await jobRunning(stack);
    const ms = await stopAndCount(stack, how);
    took.push(`${how} ${ms} ms`);
    // A Ctrl-C drains: every child said it stopped (the jobs workers by their drain's bound, the job requeued).
    if (how === 'ctrl-c') expect(logged(stack.lines, 'service stopped').length + logged(stack.lines, 'shutdown took too long; exiting').length).toBe(5);
    expect(late.loaded()).toEqual([]);
  }
  console.log(`every process of the stack gone after: ${took.join(', ')}`);
}, 6 * 90_000);

// The supervisor's own bound, for a child that cannot act at all: a stopped process (SIGSTOP) runs no
// thread, not even its watchdog. npm start says which child it kills, and after how long.
it('a child that has not exited 20 s after its SIGTERM is SIGKILLed by the supervisor, which says so', async () => {
  const stack = await startStack(td);
  const line = stack.lines.find((l) => l.startsWith('calculator-1') && l.includes('"pid":'));
  const pid = Number(/"pid":(\d+)/.exec(line ?? '')?.[1] ?? 0);
  expect(stack.tree).toContain(pid);
  process.kill(pid, 'SIGSTOP');
  const stoppedAt = Date.now();
  process.kill(-(stack.npm.pid ?? 0), 'SIGINT');
  await waitFor(() => survivors(stack.tree, stack.groups).length === 0, { timeoutMs: boundMs, intervalMs: 100, message: `still running: ${survivors(stack.tree, stack.groups).join(', ')}` });
  const tookMs = Date.now() - stoppedAt;
  expect(tookMs).toBeGreaterThanOrEqual(19_900);
  expect(stack.lines.filter((l) => /^calculator-1 +\| still running 2\d(\.\d)? s after its SIGTERM \(bound 20 s\); sending SIGKILL$/.test(l))).toHaveLength(1);
  // Only that one: the others drained in time.
  expect(stack.lines.filter((l) => l.includes('sending SIGKILL'))).toHaveLength(1);
  console.log(`a stopped child: SIGKILLed by the supervisor, the stack gone ${tookMs} ms after Ctrl-C`);
}, 120_000);
