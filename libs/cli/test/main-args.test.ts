// How `warren start` runs a main: CommonJS TypeScript under tsx's require hook (no loader thread,
// issue 42), ES module TypeScript under its loader hooks, JavaScript as it is.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { mainArgs } from '../src/commands/main-args';

let root: string;
beforeEach(() => {
  root = mkdtempSync(path.join(tmpdir(), 'warren-main-args-'));
  writeFileSync(path.join(root, 'package.json'), JSON.stringify({ name: 'acme' }));
  mkdirSync(path.join(root, 'services/esm/src'), { recursive: true });
  writeFileSync(path.join(root, 'services/esm/package.json'), JSON.stringify({ name: 'esm', type: 'module' }));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

it('runs CommonJS TypeScript with --require tsx/cjs, ES module TypeScript with --import tsx, JavaScript alone', () => {
  expect(mainArgs(root, 'services/billing/src/main.ts')).toEqual(['--require', 'tsx/cjs', 'services/billing/src/main.ts']);
  expect(mainArgs(root, 'services/billing/src/main.cts')).toEqual(['--require', 'tsx/cjs', 'services/billing/src/main.cts']);
  expect(mainArgs(root, 'services/esm/src/main.ts')).toEqual(['--import', 'tsx', 'services/esm/src/main.ts']);
  expect(mainArgs(root, 'services/billing/src/main.mts')).toEqual(['--import', 'tsx', 'services/billing/src/main.mts']);
  expect(mainArgs(root, 'dist/main.js')).toEqual(['dist/main.js']);
});
