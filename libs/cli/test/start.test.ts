// `warren start` in a project of one's own: runs warren.config.json's services, one process per
// instance with its INSTANCE_ID and the lifeline (WARREN_SUPERVISOR=stdin), prefixes their lines,
// sends each exactly one SIGTERM on stop and waits for its drain; one that exits by itself stops the
// others (exit 1). The mains here are plain Node scripts standing in for services.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { drainedExitCode } from '@warren/amqp';
import { run, type Io } from '../src/index';

let project: string;

/** Prints `up <INSTANCE_ID> <WARREN_SUPERVISOR>`, then `term <n>` on each SIGTERM, exiting 0 after a short drain; with EXIT_AFTER_UP it exits with that code by itself. */
// The handler before the line: stdout to a pipe is synchronous, so the test may stop it as soon as it reads \`up\`.
const fakeMain = `'use strict';
let terms = 0;
process.on('SIGTERM', () => { terms += 1; console.log('term ' + terms); setTimeout(() => process.exit(0), 50); });
console.log('up ' + (process.env.INSTANCE_ID || '-') + ' ' + process.env.WARREN_SUPERVISOR);
if (process.env.EXIT_AFTER_UP) setImmediate(() => process.exit(Number(process.env.EXIT_AFTER_UP)));
setInterval(() => undefined, 1000);
`;

function io(cwd: string, env: Record<string, string> = {}): Io & { output: () => string; errors: () => string; until: (re: RegExp, count: number) => Promise<void>; untilError: (text: string) => Promise<void> } {
  let out = '';
  let err = '';
  const waiters: (() => void)[] = [];
  const wake = (): void => {
    for (const w of waiters.splice(0)) w();
  };
  return {
    stdout: { write: (t: string) => ((out += t), wake()) },
    stderr: { write: (t: string) => ((err += t), wake()) },
    stdin: new PassThrough(),
    env: { ...process.env, ...env },
    cwd,
    output: () => out,
    errors: () => err,
    async until(re, count) {
      while ((out.match(new RegExp(re, 'g')) ?? []).length < count) await new Promise<void>((r) => waiters.push(r));
    },
    async untilError(text) {
      while (!err.includes(text)) await new Promise<void>((r) => waiters.push(r));
    },
  };
}

beforeEach(() => {
  project = mkdtempSync(path.join(tmpdir(), 'warren-start-'));
  writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'acme', version: '1.0.0', dependencies: { '@warren/amqp': 'file:../pk/warren-amqp-0.1.0.tgz' } }));
  mkdirSync(path.join(project, 'services/fake'), { recursive: true });
  writeFileSync(path.join(project, 'services/fake/main.js'), fakeMain);
});
afterEach(() => rmSync(project, { recursive: true, force: true }));

it('runs each instance with its INSTANCE_ID and the lifeline, and stops each with one SIGTERM', async () => {
  writeFileSync(path.join(project, 'warren.config.json'), JSON.stringify({ services: [{ name: 'billing', main: 'services/fake/main.js', instances: 2 }, { name: 'solo', main: 'services/fake/main.js' }] }));
  const shell = io(project);
  const stop = new AbortController();
  const code = run(['start'], shell, stop.signal);
  await shell.until(/ up /, 3);
  expect(shell.output()).toContain('billing-1 | up billing-1 stdin');
  expect(shell.output()).toContain('billing-2 | up billing-2 stdin');
  expect(shell.output()).toContain('solo      | up - stdin');
  stop.abort();
  await expect(code.then((c) => ({ c, out: c === 0 ? '' : shell.output() + shell.errors() }))).resolves.toEqual({ c: 0, out: '' });
  expect(shell.output().match(/term 1/g)).toHaveLength(3);
  expect(shell.output()).not.toContain('term 2');
});

it('stops everything, exit 1, when a service exits by itself', async () => {
  writeFileSync(path.join(project, 'warren.config.json'), JSON.stringify({ services: [{ name: 'billing', main: 'services/fake/main.js', instances: 2 }] }));
  const shell = io(project, { EXIT_AFTER_UP: '3' });
  await expect(run(['start'], shell, new AbortController().signal)).resolves.toBe(1);
  expect(shell.errors()).toMatch(/billing-\d \| exited \(3\); stopping everything/);
});

it('keeps the others running when one exits drained by an operator (drainedExitCode), and ends with 0', async () => {
  writeFileSync(path.join(project, 'services/fake/drained.js'), `process.exit(${drainedExitCode});\n`);
  writeFileSync(path.join(project, 'warren.config.json'), JSON.stringify({ services: [{ name: 'billing', main: 'services/fake/drained.js' }, { name: 'solo', main: 'services/fake/main.js' }] }));
  const shell = io(project);
  const stop = new AbortController();
  const code = run(['start'], shell, stop.signal);
  await shell.until(/ up /, 1);
  await shell.untilError('billing | drained by an operator and exited; the others keep running');
  expect(shell.output()).not.toContain('term');
  stop.abort();
  await expect(code).resolves.toBe(0);
  expect(shell.output().match(/term 1/g)).toHaveLength(1);
  expect(shell.errors()).not.toContain('stopping everything');
});

it('refuses a project without services listed, with a usage error', async () => {
  const shell = io(project);
  await expect(run(['start'], shell, new AbortController().signal)).resolves.toBe(2);
  expect(shell.errors()).toContain('no services listed in');
});
