// `npm test`: jest's projects that can run here (test-tiers.ts decides), with one loud line for each
// one skipped and what would enable it, printed before the run and again after jest's summary. With
// WARREN_REQUIRE_ALL_TIERS=1 (.ci/run sets it) a skip is a failure: exit 1 before jest starts.
// Arguments go to jest as they are; `--selectProjects a b` narrows the tiers considered.
// `npx jest` stays the plain run of every project (their global setup says what is missing).
import { spawn } from 'node:child_process';
import { findNeeds, planTiers, requireAllTiers, splitSelectProjects, tiers } from './test-tiers';

async function main(): Promise<number> {
  const strict = requireAllTiers(process.env);
  const { wanted, rest } = splitSelectProjects(process.argv.slice(2));
  const plan = planTiers(tiers, await findNeeds(process.env), wanted, strict);
  const shout = (): void => {
    for (const line of plan.skipped) process.stderr.write(`\n!!! ${line}\n`);
  };
  shout();
  if (plan.fail) {
    process.stderr.write('\n!!! npm test: WARREN_REQUIRE_ALL_TIERS=1 forbids skipping a tier; nothing was run.\n');
    return 1;
  }
  if (plan.run.length === 0) return 0;
  const jest = spawn(process.execPath, [require.resolve('jest/bin/jest'), '--selectProjects', ...plan.run, ...rest], { stdio: 'inherit' });
  // Ctrl-C reaches jest too (same process group): wait for it to finish rather than die first.
  process.on('SIGINT', () => undefined).on('SIGTERM', () => jest.kill('SIGTERM'));
  const code = await new Promise<number>((resolve) => jest.once('exit', (c, signal) => resolve(c ?? (signal ? 1 : 0))));
  if (plan.skipped.length > 0) shout();
  return code;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`npm test: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
