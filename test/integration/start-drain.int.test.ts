// Under `npm start` (issue 42):
// - a service an operator drains (`warren worker drain`, the broker's workers.drain) exits with
//   drainedExitCode, and the supervisor says so and keeps the others running instead of stopping
//   everything (nor does it start the drained one again);
// - its children run TypeScript through `--require tsx/cjs`: a require hook on the main thread, with no
//   tsx loader thread a late-loaded module could wait on in Atomics.wait. Run the way a child runs, a
//   fixture has exactly the threads plain `node` has (`--import tsx` adds six: its hooks' worker).
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { Teardown, waitFor } from '@warren/testkit';
import { add, processTree, startStack } from './stack';
import { repoRoot } from './helpers';

const td = new Teardown();
afterAll(() => td.run());

/** The argv of a live process, from /proc. */
const argvOf = (pid: number): string[] => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter((a) => a !== '');

/** How many threads `node <args>` has once loaded: the fixture prints it. */
async function threads(args: readonly string[]): Promise<number> {
  const { stdout } = await promisify(execFile)(process.execPath, [...args], { cwd: repoRoot });
  return Number(stdout.trim());
}

/** POST /rpc through the stack's gateway (GATEWAY_AUTH=none under npm start: operator methods too). */
async function rpc(port: number, method: string, params: unknown): Promise<{ result?: unknown; error?: unknown }> {
  const res = await fetch(`http://127.0.0.1:${port}/rpc`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', method, params, id: 1 }) });
  return (await res.json()) as { result?: unknown; error?: unknown };
}

it('children run under --require tsx/cjs with no loader thread; a drained calculator leaves the rest running', async () => {
  const stack = await startStack(td);
  const mains = stack.tree.map((pid) => ({ pid, argv: argvOf(pid) })).filter((p) => p.argv.some((a) => a.endsWith('/src/main.ts')));
  expect(mains).toHaveLength(6);
  for (const { argv } of mains) {
    expect(argv.slice(1, 3)).toEqual(['--require', 'tsx/cjs']);
    expect(argv).not.toContain('--import');
  }
  // The same flags as a child, on a fixture: no thread beyond plain node's.
  const flags = mains[0]!.argv.slice(1, -1);
  const plain = await threads(['-e', "setImmediate(() => process.stdout.write(require('fs').readdirSync('/proc/self/task').length + '\\n'))"]);
  const fixture = [...flags, path.join(repoRoot, 'test/fixtures/thread-count.ts')];
  // Once to fill tsx's compile cache: writing it takes libuv's thread pool, which a service has anyway.
  await threads(fixture);
  expect(await threads(fixture)).toBe(plain);

  const calculators = () => processTree(stack.npm.pid ?? 0).filter((pid) => argvOf(pid).some((a) => a.endsWith('services/calculator/src/main.ts')));
  expect(calculators()).toHaveLength(2);
  // Answered (`applied` may be false: a drained instance is gone before its next announcement could echo it).
  expect(await rpc(stack.port, 'workers.drain', { instanceId: 'calculator-1', service: 'calculator' })).toMatchObject({ result: { instanceId: 'calculator-1' } });
  await waitFor(() => stack.lines.some((l) => l.startsWith('calculator-1') && l.includes('drained by an operator and exited; the others keep running')), { timeoutMs: 30_000, message: 'the supervisor names the drained calculator' });
  expect(calculators()).toHaveLength(1);
  // The rest still answers, and nothing stopped or came back.
  expect(await add(stack.port)).toBe(9);
  expect(stack.npm.exitCode).toBeNull();
  expect(stack.lines.join('\n')).not.toMatch(/stopping everything/);
  expect(stack.lines.filter((l) => l.startsWith('calculator-1') && l.includes('"msg":"service ready"'))).toHaveLength(1);
}, 120_000);
