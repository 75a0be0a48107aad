// A service main run directly with a variable that does not parse (an http:// AMQP_URL, an unknown
// LOG_LEVEL) prints one line naming the variable, no stack, and exits 1 at once, as the broker does:
// the three example services and the main `warren new service` writes (serviceFiles, written under
// services/ for the run, since it resolves @warren/* as a workspace package does).
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Teardown, spawnTs, uniqueName } from '@warren/testkit';
import { serviceFiles } from '../../libs/cli/src/scaffold/service-files';
import { repoRoot } from './helpers';

const td = new Teardown();
afterAll(() => td.run());

const scaffolded = `bad-env-${uniqueName('s').toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/-+$/, '').slice(-12)}`;

beforeAll(() => {
  const dir = path.join(repoRoot, 'services', scaffolded);
  td.add(() => rmSync(dir, { recursive: true, force: true }));
  for (const [file, text] of serviceFiles(scaffolded)) {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    writeFileSync(path.join(dir, file), text);
  }
});

const mains = ['calculator', 'audit', 'jobs', scaffolded];
const cases: [string, Record<string, string>, RegExp][] = [
  ['AMQP_URL', { AMQP_URL: 'http://x' }, /^AMQP_URL must be amqp:\/\/ or amqps:\/\/ URLs/],
  ['LOG_LEVEL', { LOG_LEVEL: 'verbose' }, /^LOG_LEVEL must be .*"info".*, got "verbose"$/],
];

describe.each(cases)('a bad %s', (_variable, env, message) => {
  it.each(mains)('%s prints one line naming it, no stack, and exits 1', async (name) => {
    const child = spawnTs(path.join(repoRoot, 'services', name, 'src', 'main.ts'), [], { ...env, REDIS_URL: '' });
    td.add(async () => {
      await child.kill('SIGKILL');
    });
    const { code } = await child.exited;
    const prefix = `${name} failed to start: `;
    expect({ code, stdout: child.stdout, lines: child.stderr.length }).toEqual({ code: 1, stdout: [], lines: 1 });
    const line = child.stderr[0] ?? '';
    expect(line.startsWith(prefix)).toBe(true);
    expect(line.slice(prefix.length)).toMatch(message);
  }, 60_000);
});
