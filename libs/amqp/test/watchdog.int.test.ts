// The last resort (issue 42): a process whose main thread blocks for good (Atomics.wait, as tsx's
// synchronous helpers do) can run no timer, signal handler or pipe listener of its own, so neither
// SHUTDOWN_TIMEOUT_MS nor the supervisor's pipe can end it. The watchdog thread (watchdog.ts) does:
// SIGKILL at the shutdown's bound plus its margin (5 s), or that long after the supervisor died.
// No broker needed; in the integration tier because each case waits out real bounds (about 6 s).
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { spawnTs, waitFor } from '@warren/testkit';

const fixture = path.join(__dirname, 'fixtures', 'blocking-main.ts');
const idle = path.join(__dirname, 'fixtures', 'idle-watchdog.ts');
const watchdogLine = (lines: readonly string[]): Record<string, unknown> | undefined =>
  lines.map((l) => (l.startsWith('{') ? (JSON.parse(l) as Record<string, unknown>) : {})).find((l) => l['component'] === 'watchdog');

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

it('ends a process whose main thread blocked in its shutdown, at SHUTDOWN_TIMEOUT_MS plus the margin', async () => {
  const child = spawnTs(fixture, [], { BLOCK: 'shutdown', SHUTDOWN_TIMEOUT_MS: '1000' });
  await child.waitForLine(/^ready /, 20_000);
  const termAt = Date.now();
  child.child.kill('SIGTERM');
  const exit = await child.exited;
  const tookMs = Date.now() - termAt;
  // SIGKILL, from its own thread: its own 1 s timeout could not run (the main thread was blocked).
  expect(exit.signal).toBe('SIGKILL');
  expect(watchdogLine(child.stderr)).toMatchObject({ name: 'blocker', boundMs: 6000, msg: expect.stringMatching(/after a shutdown.*SIGKILL/) });
  expect(tookMs).toBeGreaterThanOrEqual(5900);
  console.log(`blocked in its shutdown: SIGKILLed by its watchdog ${tookMs} ms after SIGTERM`);
}, 40_000);

it('ends a supervised process whose main thread blocked before any signal, once its supervisor is gone', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'warren-watchdog-'));
  try {
    const out = path.join(dir, 'out');
    // A supervisor as npm start is one: it holds the child's stdin pipe (WARREN_SUPERVISOR=stdin) and is SIGKILLed.
    const supervisorCode = `
      const { spawn } = require('node:child_process');
      const fs = require('node:fs');
      const fd = fs.openSync(${JSON.stringify(out)}, 'a');
      const child = spawn(process.execPath, ['--import', 'tsx', ${JSON.stringify(fixture)}], { stdio: ['pipe', fd, fd], env: { ...process.env, BLOCK: 'now', SHUTDOWN_TIMEOUT_MS: '1000', WARREN_SUPERVISOR: 'stdin' } });
      setInterval(() => undefined, 1000);`;
    const supervisor = spawn(process.execPath, ['-e', supervisorCode], { stdio: 'ignore', cwd: process.cwd() });
    let pid = 0;
    await waitFor(() => {
      const text = readFileSync(out, { encoding: 'utf8', flag: 'a+' });
      pid = Number(/ready (\d+)/.exec(text)?.[1] ?? 0);
      return pid > 0 && text.includes('blocking');
    }, { timeoutMs: 20_000, message: 'the blocking main started and blocked' });
    // Its main thread is blocked from now on: its stdin's end (below) is never read.
    const killedAt = Date.now();
    supervisor.kill('SIGKILL');
    await waitFor(() => !alive(pid), { timeoutMs: 20_000, intervalMs: 100, message: `blocked orphan ${pid} still running` });
    const tookMs = Date.now() - killedAt;
    const lines = readFileSync(out, 'utf8').split('\n');
    expect(watchdogLine(lines)).toMatchObject({ name: 'blocker', msg: expect.stringMatching(/supervisor's death.*SIGKILL/) });
    expect(tookMs).toBeGreaterThanOrEqual(5900);
    console.log(`blocked before any signal: SIGKILLed by its watchdog ${tookMs} ms after its supervisor's death`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 40_000);

describe('the thread itself (0.2 s bounds)', () => {
  it('keeps no healthy process alive: one with nothing else to do exits on its own', async () => {
    const exit = await spawnTs(idle, [], { MODE: 'idle' }).exited;
    expect(exit).toMatchObject({ code: 0, signal: null });
  });

  it('SIGKILLs a process whose shutdown outlived the bound, and stays quiet once closed', async () => {
    const armed = spawnTs(idle, [], { MODE: 'armed' });
    expect(await armed.exited).toMatchObject({ signal: 'SIGKILL' });
    expect(armed.stdout).not.toContain('survived');
    expect(watchdogLine(armed.stderr)).toMatchObject({ name: 'idle', boundMs: 200 });
    const disarmed = spawnTs(idle, [], { MODE: 'disarmed' });
    expect(await disarmed.exited).toMatchObject({ code: 0, signal: null });
    expect(disarmed.stdout).toContain('survived');
  });
});
