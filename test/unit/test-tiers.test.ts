// `npm test` on a machine with only Node: the tiers it can run, the loud line for each it skips, and
// WARREN_REQUIRE_ALL_TIERS=1 (set by .ci/run) turning a skip into a failure. The bare machine is
// played as the embedded test plays it: the default ports moved to closed ones, Docker off, and
// CHROMIUM_PATH pointing at nothing.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { freePort } from '@warren/testkit';
import { findNeeds, planTiers, requireAllTiers, splitSelectProjects, tiers, type Found } from '../../scripts/test-tiers';

const root = path.resolve(__dirname, '../..');

/** A machine with Node alone, whatever this one runs. */
async function bareEnv(): Promise<Record<string, string>> {
  const [amqpPort, redisPort] = await Promise.all([freePort(), freePort()]);
  return {
    AMQP_URL: '',
    REDIS_URL: '',
    WARREN_DEFAULT_AMQP_URL: `amqp://guest:guest@127.0.0.1:${amqpPort}`,
    WARREN_DEFAULT_REDIS_URL: `redis://127.0.0.1:${redisPort}`,
    WARREN_DOCKER: 'off',
    CHROMIUM_PATH: path.join(root, 'no-such-chromium'),
    WARREN_REQUIRE_ALL_TIERS: '',
  };
}

const everything: Found = { services: { ok: true }, chromium: { ok: true } };
const noServices = { ok: false, why: 'needs RabbitMQ + Redis', enable: 'start them' } as const;
const noChromium = { ok: false, why: 'needs Chromium', enable: 'install it' } as const;

describe('planTiers', () => {
  it('runs every project when everything is there, and skips nothing', () => {
    expect(planTiers(tiers, everything, [], true)).toEqual({ run: ['unit', 'integration', 'browser', 'browser-embedded'], skipped: [], fail: false });
  });

  it('skips, with one line each, the projects whose needs are missing, and fails only when told to', () => {
    const plan = planTiers(tiers, { services: noServices, chromium: everything.chromium }, [], false);
    expect(plan.run).toEqual(['unit', 'browser-embedded']);
    expect(plan.skipped).toHaveLength(2);
    expect(plan.skipped[0]).toMatch(/^npm test: SKIPPED the integration tier: needs RabbitMQ \+ Redis\. To run it: start them\.$/);
    expect(plan.fail).toBe(false);
    expect(planTiers(tiers, { services: noServices, chromium: noChromium }, [], true)).toMatchObject({ run: ['unit'], fail: true });
  });

  it('names both missing needs of the browser tier', () => {
    const plan = planTiers(tiers, { services: noServices, chromium: noChromium }, ['browser'], false);
    expect(plan).toEqual({ run: [], skipped: ['npm test: SKIPPED the browser tier: needs RabbitMQ + Redis; needs Chromium. To run it: start them; and install it.'], fail: false });
  });

  it('considers only the projects --selectProjects names, and passes unknown ones on to jest', () => {
    expect(planTiers(tiers, { services: noServices, chromium: noChromium }, ['unit', 'soak'], true)).toEqual({ run: ['unit', 'soak'], skipped: [], fail: false });
  });
});

describe('splitSelectProjects', () => {
  it('takes both forms out of jest arguments and leaves the rest', () => {
    expect(splitSelectProjects(['--selectProjects', 'unit', 'integration', '--ci', 'libs/x'])).toEqual({ wanted: ['unit', 'integration'], rest: ['--ci', 'libs/x'] });
    expect(splitSelectProjects(['--selectProjects=unit', '-t', 'name'])).toEqual({ wanted: ['unit'], rest: ['-t', 'name'] });
  });
});

describe('requireAllTiers', () => {
  it('reads 1/0 and refuses anything else, naming the variable', () => {
    expect(requireAllTiers({ WARREN_REQUIRE_ALL_TIERS: '1' })).toBe(true);
    expect(requireAllTiers({ WARREN_REQUIRE_ALL_TIERS: '0' })).toBe(false);
    expect(requireAllTiers({ CI: 'true' })).toBe(false);
    expect(() => requireAllTiers({ WARREN_REQUIRE_ALL_TIERS: 'yes' })).toThrow(/WARREN_REQUIRE_ALL_TIERS/);
  });
});

describe('tiers', () => {
  it('has an entry for every project of jest.config.js', () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const config = require('../../jest.config.js') as { projects: { displayName: string }[] };
    expect(tiers.map((t) => t.project).sort()).toEqual(config.projects.map((p) => p.displayName).sort());
  });
});

describe('findNeeds on a bare machine', () => {
  it('finds neither RabbitMQ + Redis (closed ports, Docker off) nor Chromium, and says what would enable each', async () => {
    const found = await findNeeds(await bareEnv());
    expect(found.services).toMatchObject({ ok: false, why: expect.stringContaining('WARREN_DOCKER=off'), enable: expect.stringContaining('AMQP_URL') });
    expect(found.chromium).toMatchObject({ ok: false, why: expect.stringContaining('no-such-chromium'), enable: expect.stringContaining('CHROMIUM_PATH') });
  });

  it('counts a Chromium that is there but does not run as none', async () => {
    const found = await findNeeds({ ...(await bareEnv()), CHROMIUM_PATH: path.join(root, 'package.json') });
    expect(found.chromium).toMatchObject({ ok: false, why: expect.stringContaining('--version fails') });
  });

  it('asks Docker only when a service is missing, and counts a URL that is set as found', async () => {
    const docker = jest.fn(() => Promise.reject(new Error('no engine')));
    const found = await findNeeds({ AMQP_URL: 'amqp://elsewhere', REDIS_URL: 'redis://elsewhere', CHROMIUM_PATH: process.execPath }, () => Promise.resolve(false), docker);
    expect(found).toEqual(everything);
    expect(docker).not.toHaveBeenCalled();
  });
});

/** Runs `npm test`'s script with jest's --listTests (jest lists the files it would run, and runs none). */
function npmTestListing(env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', path.join(root, 'scripts/test.ts'), '--listTests'], { cwd: root, env: { ...process.env, ...env } }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
  });
}

describe('npm test on a bare machine (scripts/test.ts)', () => {
  it('runs the unit tier alone, exits 0 and names each skipped tier with what would enable it', async () => {
    const { code, stdout, stderr } = await npmTestListing(await bareEnv());
    expect(code).toBe(0);
    const listed = stdout.split('\n').filter(Boolean).map((f) => path.relative(root, f));
    expect(listed).toContain('test/unit/embedded.test.ts');
    expect(listed.some((f) => f.startsWith('libs/amqp/test/memory/'))).toBe(true);
    expect(listed.filter((f) => f.endsWith('.int.test.ts') || f.endsWith('.browser.test.ts'))).toEqual([]);
    const loud = stderr.split('\n').filter((l) => l.startsWith('!!! '));
    // Printed before jest starts and again after its summary, where the eye lands.
    expect(loud.slice(3)).toEqual(loud.slice(0, 3));
    expect(loud.slice(0, 3)).toEqual([
      expect.stringMatching(/^!!! npm test: SKIPPED the integration tier: needs RabbitMQ \+ Redis.*To run it: .*Docker/),
      expect.stringMatching(/^!!! npm test: SKIPPED the browser tier: .*RabbitMQ \+ Redis.*Chromium/),
      expect.stringMatching(/^!!! npm test: SKIPPED the browser-embedded tier: needs Chromium.*CHROMIUM_PATH/),
    ]);
  }, 120_000);

  it('fails, running nothing, when WARREN_REQUIRE_ALL_TIERS=1 (CI) and a tier would be skipped', async () => {
    const { code, stdout, stderr } = await npmTestListing({ ...(await bareEnv()), WARREN_REQUIRE_ALL_TIERS: '1' });
    expect(code).not.toBe(0);
    expect(stdout).toBe('');
    expect(stderr).toMatch(/CANNOT RUN the integration tier/);
    expect(stderr).toMatch(/WARREN_REQUIRE_ALL_TIERS=1 forbids skipping/);
  }, 120_000);
});
