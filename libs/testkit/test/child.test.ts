import { join } from 'node:path';
import { Teardown, spawnTs } from '@warren/testkit';

const fixture = join(__dirname, 'fixtures', 'child-fixture.ts');
const td = new Teardown();
afterEach(() => td.run());

describe('spawnTs', () => {
  it('runs a TypeScript file, reads its lines and reports a SIGKILL', async () => {
    const proc = spawnTs(fixture, ['a', 'b'], { TESTKIT_GREETING: 'hi' });
    td.add(() => proc.kill('SIGKILL'));
    await expect(proc.waitForLine(/^ready /, 15_000)).resolves.toBe('ready a,b hi');
    proc.child.stdin.write('one\ntwo\n');
    await expect(proc.waitForLine((line) => line.startsWith('echo'))).resolves.toBe('echo one');
    await expect(proc.waitForLine(/^echo/)).resolves.toBe('echo two');
    expect(proc.stderr).toContain('starting');

    const exit = await proc.kill('SIGKILL');
    expect(exit).toEqual({ code: null, signal: 'SIGKILL' });
    await expect(proc.waitForLine(/never/, 1000)).rejects.toThrow(/already exited/);
  }, 20_000);

  it('rejects waitForLine when the child exits first', async () => {
    const proc = spawnTs(join(__dirname, 'fixtures', 'missing-file.ts'), []);
    td.add(() => proc.kill('SIGKILL'));
    await expect(proc.waitForLine(/ready/, 15_000)).rejects.toThrow(/exited/);
    const exit = await proc.exited;
    expect(exit.code).not.toBe(0);
  }, 20_000);
});
