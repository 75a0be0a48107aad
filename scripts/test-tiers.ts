// Which of jest.config.js's projects `npm test` can run on this machine (scripts/test.ts runs them).
// The unit project (pure, in-memory and embedded tests) needs nothing; the others need RabbitMQ and
// Redis (found as the integration global setup finds them: ensure-services.ts) and/or Debian's
// Chromium. A project that cannot run is skipped with one loud line saying what would enable it,
// unless WARREN_REQUIRE_ALL_TIERS=1 (set by .ci/run), which turns any skip into a failure: CI must
// never pass by skipping.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { checkDocker, defaultUrls, findServices, probeTcp, redactPassword, type EnsureDeps } from './ensure-services';

/** What a project needs besides Node. */
export type Need = 'services' | 'chromium';

export interface Tier {
  /** The jest project's displayName in jest.config.js. */
  readonly project: string;
  readonly needs: readonly Need[];
}

/** Every project of jest.config.js (test/unit/test-tiers.test.ts checks that none is missing). */
export const tiers: readonly Tier[] = [
  { project: 'unit', needs: [] },
  { project: 'integration', needs: ['services'] },
  { project: 'browser', needs: ['services', 'chromium'] },
  { project: 'browser-embedded', needs: ['chromium'] },
];

/** For each need, whether it is there, and if not, why and how to get it. */
export type Found = Readonly<Record<Need, { readonly ok: true } | { readonly ok: false; readonly why: string; readonly enable: string }>>;

export interface Plan {
  /** The projects to hand to jest's --selectProjects. */
  readonly run: readonly string[];
  /** One line per skipped project. */
  readonly skipped: readonly string[];
  /** True when something was skipped and WARREN_REQUIRE_ALL_TIERS forbids it. */
  readonly fail: boolean;
}

/** WARREN_REQUIRE_ALL_TIERS: `1`/`true` forbids skipping, `0`/`false`/unset allows it; anything else is an error naming the variable. */
export function requireAllTiers(env: NodeJS.ProcessEnv): boolean {
  const v = env['WARREN_REQUIRE_ALL_TIERS']?.trim().toLowerCase() ?? '';
  if (v === '1' || v === 'true') return true;
  if (v === '' || v === '0' || v === 'false') return false;
  throw new RangeError(`WARREN_REQUIRE_ALL_TIERS must be 1 or 0, got ${JSON.stringify(env['WARREN_REQUIRE_ALL_TIERS'])}`);
}

/**
 * The projects to run out of `wanted` (all tiers when the caller selected none) given what was
 * found. Projects unknown to the tier table are passed on as they are (jest reports them).
 *
 * @example planTiers(tiers, found, [], false) // { run: ['unit'], skipped: ['npm test: SKIPPED integration ...', ...], fail: false }
 */
export function planTiers(all: readonly Tier[], found: Found, wanted: readonly string[], strict: boolean): Plan {
  const selected = wanted.length > 0 ? wanted : all.map((t) => t.project);
  const run: string[] = [];
  const skipped: string[] = [];
  for (const project of selected) {
    const tier = all.find((t) => t.project === project);
    const lacking = (tier?.needs ?? []).flatMap((need) => {
      const f = found[need];
      return f.ok ? [] : [f];
    });
    if (lacking.length === 0) run.push(project);
    else {
      const verb = strict ? 'CANNOT RUN' : 'SKIPPED';
      skipped.push(`npm test: ${verb} the ${project} tier: ${lacking.map((l) => l.why).join('; ')}. To run it: ${lacking.map((l) => l.enable).join('; and ')}.`);
    }
  }
  return { run, skipped, fail: strict && skipped.length > 0 };
}

/** The Chromium the browser tests launch (test/browser/chromium.ts reads the same variable). */
export function chromiumPath(env: NodeJS.ProcessEnv): string {
  return env['CHROMIUM_PATH'] || '/usr/bin/chromium';
}

/** Looks for RabbitMQ and Redis (env, default ports, or a Docker engine to start them) and for a Chromium that runs; starts nothing. */
export async function findNeeds(env: NodeJS.ProcessEnv, probe: EnsureDeps['probe'] = probeTcp, docker: (env: NodeJS.ProcessEnv) => Promise<void> = checkDocker): Promise<Found> {
  const chromium = findChromium(env);
  const states = await findServices(env, probe);
  const missing = states.filter(([, s]) => s === 'missing').map(([d]) => d);
  let services: Found['services'] = { ok: true };
  if (missing.length > 0) {
    const dockerWhy = await docker(env).then(
      () => undefined,
      (err: unknown) => (err instanceof Error ? err.message : String(err)),
    );
    if (dockerWhy !== undefined) {
      const urls = defaultUrls(env);
      const at = missing.map((d) => `${d === 'rabbitmq' ? 'RabbitMQ' : 'Redis'} at ${redactPassword(urls[d])}`).join(', ');
      services = {
        ok: false,
        why: `needs RabbitMQ + Redis, and nothing answers (${at}; AMQP_URL/REDIS_URL unset) nor is Docker reachable (${dockerWhy})`,
        enable: 'start RabbitMQ and Redis on the default ports, or set AMQP_URL and REDIS_URL, or make a Docker engine reachable (testcontainers starts them)',
      };
    }
  }
  return { services, chromium: await chromium };
}

/** Chromium is usable when its `--version` answers (a file that is there but broken counts as none). */
async function findChromium(env: NodeJS.ProcessEnv): Promise<Found['chromium']> {
  const chrome = chromiumPath(env);
  const enable = 'apt-get install chromium (Debian\'s, at /usr/bin/chromium) or set CHROMIUM_PATH';
  if (!existsSync(chrome)) return { ok: false, why: `needs Chromium, and there is none at ${chrome}`, enable };
  const fails = await new Promise<string | undefined>((resolve) => {
    execFile(chrome, ['--version'], { timeout: 30_000 }, (err) => resolve(err ? err.message : undefined));
  });
  return fails === undefined ? { ok: true } : { ok: false, why: `needs Chromium, and ${chrome} --version fails (${fails.split('\n')[0] ?? ''})`, enable };
}

/** Splits jest's arguments into the projects named by --selectProjects (either form) and the rest. */
export function splitSelectProjects(args: readonly string[]): { wanted: string[]; rest: string[] } {
  const wanted: string[] = [];
  const rest: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (a.startsWith('--selectProjects=')) wanted.push(a.slice('--selectProjects='.length));
    else if (a === '--selectProjects') {
      while (i + 1 < args.length && !(args[i + 1] as string).startsWith('-')) wanted.push(args[++i] as string);
    } else rest.push(a);
  }
  return { wanted, rest };
}
