// warren.config.json lists a project's own services; `npm start` runs each as processes beside the
// example ones (scripts/project-config.ts; the shape: @warren/cli's project-config.ts).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseProjectConfig } from '@warren/cli';
import { projectProcesses } from '../../scripts/project-config';

let root: string;
const builtIn = [{ name: 'broker', file: 'broker/src/main.ts' }, { name: 'audit', file: 'services/audit/src/main.ts' }];

beforeEach(() => {
  root = mkdtempSync(path.join(os.tmpdir(), 'warren-config-'));
  mkdirSync(path.join(root, 'services/billing/src'), { recursive: true });
  writeFileSync(path.join(root, 'services/billing/src/main.ts'), '');
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const write = (config: unknown): void => writeFileSync(path.join(root, 'warren.config.json'), JSON.stringify(config));

it('runs nothing more without a warren.config.json', () => {
  expect(projectProcesses(root, builtIn)).toEqual([]);
});

it('runs one process per instance, each its INSTANCE_ID when there are several', () => {
  write({ services: [{ name: 'billing', main: 'services/billing/src/main.ts', instances: 2 }, { name: 'solo', main: 'services/billing/src/main.ts' }] });
  expect(projectProcesses(root, builtIn)).toEqual([
    { name: 'billing-1', file: 'services/billing/src/main.ts', env: { INSTANCE_ID: 'billing-1' } },
    { name: 'billing-2', file: 'services/billing/src/main.ts', env: { INSTANCE_ID: 'billing-2' } },
    { name: 'solo', file: 'services/billing/src/main.ts' },
  ]);
});

it('refuses a main that is not there and a name npm start uses already', () => {
  write({ services: [{ name: 'billing', main: 'services/billing/src/missing.ts' }] });
  expect(() => projectProcesses(root, builtIn)).toThrow(/billing's main services\/billing\/src\/missing\.ts does not exist/);
  write({ services: [{ name: 'audit', main: 'services/billing/src/main.ts' }] });
  expect(() => projectProcesses(root, builtIn)).toThrow(/audit is a process npm start runs already/);
});

it.each([
  ['not JSON', '{', /not JSON/],
  ['an unknown field', '{"servics": []}', /servics is not a field/],
  ['services not an array', '{"services": {}}', /services must be an array/],
  ['a bad name', '{"services": [{"name": "Billing", "main": "a.ts"}]}', /services\[0\]\.name must be/],
  ['a main outside the project', '{"services": [{"name": "billing", "main": "../x.ts"}]}', /services\[0\]\.main must be/],
  ['a main that is no module', '{"services": [{"name": "billing", "main": "x.txt"}]}', /services\[0\]\.main must be/],
  ['zero instances', '{"services": [{"name": "billing", "main": "a.ts", "instances": 0}]}', /services\[0\]\.instances must be a whole number from 1 to 16/],
  ['a field of a service misspelt', '{"services": [{"name": "billing", "main": "a.ts", "instance": 2}]}', /services\[0\]\.instance is not a field/],
  ['a name twice', '{"services": [{"name": "billing", "main": "a.ts"}, {"name": "billing", "main": "b.ts"}]}', /billing is listed twice/],
])('refuses %s, naming the field', (_what, text, problem) => {
  const result = parseProjectConfig(text);
  expect(result.ok).toBe(false);
  expect(result.ok ? '' : result.problems.join('; ')).toMatch(problem);
});
