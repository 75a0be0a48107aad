// `warren new service NAME` in a team's own npm project (one depending on @warren/amqp, the packages
// installed from `npm run pack`'s tarballs): services/NAME with a self-contained tsconfig, depending
// on the project's own @warren packages by the same specs, listed in warren.config.json. The whole
// flow, installed from real tarballs and run against RabbitMQ, is test/pack/pack.test.ts.
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { run, type Io } from '../src/index';

let project: string;

function io(cwd: string): Io & { output: () => string; errors: () => string } {
  let out = '';
  let err = '';
  return { stdout: { write: (t: string) => (out += t) }, stderr: { write: (t: string) => (err += t) }, stdin: new PassThrough(), env: {}, cwd, output: () => out, errors: () => err };
}

/** A project as `npm install ../pk/*.tgz` leaves it: file: specs in package.json, the packages in node_modules. */
function makeProject(installed: readonly string[]): void {
  const deps = Object.fromEntries(installed.map((n) => [`@warren/${n}`, `file:../pk/warren-${n}-0.1.0.tgz`]));
  writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'acme-app', version: '1.0.0', dependencies: deps }));
  for (const n of [...installed, 'jsonrpc', 'logger']) {
    mkdirSync(path.join(project, 'node_modules/@warren', n), { recursive: true });
    writeFileSync(path.join(project, 'node_modules/@warren', n, 'package.json'), JSON.stringify({ name: `@warren/${n}`, version: '0.1.0' }));
  }
}

beforeEach(() => {
  project = mkdtempSync(path.join(tmpdir(), 'warren-project-'));
});
afterEach(() => rmSync(project, { recursive: true, force: true }));

it('scaffolds services/NAME depending on the project\'s own @warren packages, and lists it in warren.config.json', async () => {
  makeProject(['amqp', 'amqp-transport', 'inflight', 'tracing-node']);
  mkdirSync(path.join(project, 'src'));
  // From a directory inside the project: the project is found above it.
  const shell = io(path.join(project, 'src'));
  await expect(run(['new', 'service', 'billing'], shell)).resolves.toBe(0);
  const dir = path.join(project, 'services/billing');
  expect(readdirSync(dir).sort()).toEqual(['README.md', 'package.json', 'src', 'test', 'tsconfig.json']);
  const pkg = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { name: string; dependencies: Record<string, string>; devDependencies: Record<string, string>; scripts: Record<string, string> };
  expect(pkg.name).toBe('acme-app-billing');
  // The project's file: specs, re-pointed from services/billing; what it has only through another package, by its installed version.
  expect(pkg.dependencies).toEqual({ '@sinclair/typebox': expect.any(String) as unknown, '@warren/amqp': 'file:../../../pk/warren-amqp-0.1.0.tgz', '@warren/inflight': 'file:../../../pk/warren-inflight-0.1.0.tgz', '@warren/jsonrpc': '^0.1.0', '@warren/logger': '^0.1.0', '@warren/tracing-node': 'file:../../../pk/warren-tracing-node-0.1.0.tgz' });
  expect(pkg.devDependencies).toEqual({ '@warren/amqp-transport': 'file:../../../pk/warren-amqp-transport-0.1.0.tgz' });
  expect(pkg.scripts['build']).toBe('tsc -p .');
  // Nothing of Warren's repository is referenced.
  expect(readFileSync(path.join(dir, 'tsconfig.json'), 'utf8')).not.toMatch(/\.\.\//);
  expect(JSON.parse(readFileSync(path.join(project, 'warren.config.json'), 'utf8'))).toEqual({ services: [{ name: 'billing', main: 'services/billing/src/main.ts' }] });
  expect(shell.output()).toContain('npx warren start');
  expect(shell.output()).toContain('node --require tsx/cjs services/billing/src/main.ts');

  // A second service is appended; the first stays.
  await expect(run(['new', 'service', 'reports'], io(project))).resolves.toBe(0);
  expect(JSON.parse(readFileSync(path.join(project, 'warren.config.json'), 'utf8'))).toEqual({ services: [{ name: 'billing', main: 'services/billing/src/main.ts' }, { name: 'reports', main: 'services/reports/src/main.ts' }] });
});

it('refuses, writing nothing, when the project lacks a @warren package the scaffold imports', async () => {
  makeProject(['amqp']);
  const shell = io(project);
  await expect(run(['new', 'service', 'billing'], shell)).resolves.toBe(2);
  expect(shell.errors()).toContain('error CLI_USAGE: the scaffold imports @warren/inflight, @warren/tracing-node, @warren/amqp-transport, which this project does not have');
  expect(existsSync(path.join(project, 'services/billing'))).toBe(false);
  expect(existsSync(path.join(project, 'warren.config.json'))).toBe(false);
});

it('refuses a warren.config.json it cannot read, naming the field, and leaves no directory behind', async () => {
  makeProject(['amqp', 'amqp-transport', 'inflight', 'tracing-node']);
  writeFileSync(path.join(project, 'warren.config.json'), JSON.stringify({ services: [{ name: 'x', main: '/abs.ts' }] }));
  const shell = io(project);
  await expect(run(['new', 'service', 'billing'], shell)).resolves.toBe(2);
  expect(shell.errors()).toMatch(/services\[0\]\.name must be .*services\[0\]\.main must be a \.ts or \.js file inside the project/);
  expect(existsSync(path.join(project, 'services/billing'))).toBe(false);
});
