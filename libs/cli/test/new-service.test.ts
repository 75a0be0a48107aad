// `warren new service NAME` in this repository (outside it: new-service-project.test.ts): the package it writes passes its own test at once
// (`npm test` in the package: jest over the in-memory broker) and type-checks; bad names, a
// directory already there and a place outside any workspace are refused with a usage error and
// leave nothing behind. The scaffolded directory is removed on every path.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { promisify } from 'node:util';
import { Teardown, uniqueName } from '@warren/testkit';
import { run, type Io } from '../src/index';
import { badServiceName } from '../src/commands/new-service';

const exec = promisify(execFile);
const repoRoot = path.resolve(__dirname, '..', '..', '..');
const td = new Teardown();
afterAll(() => td.run());

function io(cwd: string): Io & { output: () => string; errors: () => string } {
  let out = '';
  let err = '';
  return { stdout: { write: (t: string) => (out += t) }, stderr: { write: (t: string) => (err += t) }, stdin: new PassThrough(), env: {}, cwd, output: () => out, errors: () => err };
}

it('scaffolds a service whose own npm test passes at once, and which type-checks', async () => {
  const name = `scaffold-${uniqueName('t').toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/-+$/, '').slice(-20)}`;
  expect(badServiceName(name)).toBeUndefined();
  const dir = path.join(repoRoot, 'services', name);
  td.add(() => rmSync(dir, { recursive: true, force: true }));
  // From a directory inside the workspace: the workspace is found above it.
  const shell = io(path.join(repoRoot, 'libs', 'cli'));
  // --no-config: the repository's warren.config.json is left alone (npm start, run by other tests, reads it).
  await expect(run(['new', 'service', name, '--no-config'], shell)).resolves.toBe(0);
  expect(shell.output()).toContain(`created ../../services/${name}: package.json, tsconfig.json, README.md, src/service.ts, src/main.ts, test/service.test.ts`);
  expect(readdirSync(dir).sort()).toEqual(['README.md', 'package.json', 'src', 'test', 'tsconfig.json']);

  const test = await exec('npm', ['test'], { cwd: dir, env: { ...process.env, FORCE_COLOR: '0' } });
  expect(`${test.stdout}${test.stderr}`).toMatch(/Tests:\s+2 passed, 2 total/);

  // Its sources and test under the repository's strict settings (removed with the package).
  writeFileSync(path.join(dir, 'tsconfig.check.json'), JSON.stringify({ extends: '../../tsconfig.json', include: ['src', 'test'] }));
  await expect(exec(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', path.join(dir, 'tsconfig.check.json')], { cwd: repoRoot })).resolves.toMatchObject({ stdout: '' });

  // Running it again refuses the existing directory.
  const again = io(repoRoot);
  await expect(run(['new', 'service', name, '--no-config'], again)).resolves.toBe(2);
  expect(again.errors()).toContain(`error CLI_USAGE: services/${name} already exists`);
}, 180_000);

it.each(['Demo', '1st', 'a', 'x_y', '../escape', 'bad--name', 'trailing-', 'warren-broker', 'x'.repeat(41)])('refuses the name %j and writes nothing', async (name) => {
  const before = readdirSync(path.join(repoRoot, 'services')).sort();
  const shell = io(repoRoot);
  await expect(run(['new', 'service', name], shell)).resolves.toBe(2);
  expect(shell.errors()).toMatch(/^error CLI_USAGE: /);
  expect(readdirSync(path.join(repoRoot, 'services')).sort()).toEqual(before);
});

it('refuses an existing service directory and a place outside any Warren workspace or project', async () => {
  const existing = io(repoRoot);
  await expect(run(['new', 'service', 'calculator', '--no-config'], existing)).resolves.toBe(2);
  expect(existing.errors()).toBe('error CLI_USAGE: services/calculator already exists: choose another name or remove it\n');
  const outside = mkdtempSync(path.join(tmpdir(), 'warren-new-'));
  td.add(() => rmSync(outside, { recursive: true, force: true }));
  const elsewhere = io(outside);
  await expect(run(['new', 'service', 'demo', '--root', outside], elsewhere)).resolves.toBe(2);
  expect(elsewhere.errors()).toContain('error CLI_USAGE: no Warren workspace (a package.json with "services/*" in its workspaces) nor npm project depending on @warren/amqp');
  expect(existsSync(path.join(outside, 'services'))).toBe(false);
});
