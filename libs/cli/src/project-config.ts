// warren.config.json: a project's own services, at its root, so they join `npm start` and
// `--watch` in Warren's repository (scripts/project-config.ts) and `warren new service` can
// record what it made. One shape, checked here, by every reader and writer:
//
//   { "services": [{ "name": "billing", "main": "services/billing/src/main.ts", "instances": 2 }] }
//
// The file is checked field by field (a tagged result, each problem naming its field): it is small
// and hand-edited, and a message that says `services[1].main` helps more than a schema dump.
import { existsSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';

/** The file's name, at a project's root. */
export const projectConfigFile = 'warren.config.json';

/** One service of the project: its name (also each process's label), its main, and how many processes run it. */
export interface ProjectService {
  /** Lower-case letters, digits and inner hyphens, as `warren new service` names them. */
  readonly name: string;
  /** Its main module, relative to the project root (e.g. `services/billing/src/main.ts`); run as `node --require tsx/cjs <main>` (`--import tsx` for an ES module main; commands/main-args.ts). */
  readonly main: string;
  /** Processes started for it, each with INSTANCE_ID `<name>-<n>` when more than one. @default 1 */
  readonly instances: number;
}

export interface ProjectConfig {
  readonly services: readonly ProjectService[];
}

export type ProjectConfigResult = { readonly ok: true; readonly config: ProjectConfig } | { readonly ok: false; readonly problems: readonly string[] };

const namePattern = /^[a-z][a-z0-9-]{0,38}[a-z0-9]$/;
/** A generous bound: each instance is a process on the developer's machine. */
const maxInstances = 16;

function checkService(raw: unknown, at: string, problems: string[]): ProjectService | undefined {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    problems.push(`${at} must be an object {name, main, instances?}`);
    return undefined;
  }
  const s = raw as Record<string, unknown>;
  const before = problems.length;
  for (const key of Object.keys(s)) if (!['name', 'main', 'instances'].includes(key)) problems.push(`${at}.${key} is not a field (name, main, instances)`);
  if (typeof s['name'] !== 'string' || !namePattern.test(s['name']) || s['name'].includes('--')) problems.push(`${at}.name must be 2 to 40 lower-case letters, digits and single inner hyphens, got ${JSON.stringify(s['name'])}`);
  const main = s['main'];
  if (typeof main !== 'string' || !/\.(ts|mts|cts|js|mjs|cjs)$/.test(main) || path.isAbsolute(main) || main.split(/[\\/]/).includes('..')) problems.push(`${at}.main must be a .ts or .js file inside the project, relative to its root, got ${JSON.stringify(main)}`);
  const instances = s['instances'] ?? 1;
  if (typeof instances !== 'number' || !Number.isInteger(instances) || instances < 1 || instances > maxInstances) problems.push(`${at}.instances must be a whole number from 1 to ${maxInstances}, got ${JSON.stringify(s['instances'])}`);
  return problems.length === before ? { name: s['name'] as string, main: main as string, instances: instances as number } : undefined;
}

/** Checks a warren.config.json's text; every problem names its field. */
export function parseProjectConfig(text: string): ProjectConfigResult {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    return { ok: false, problems: [`not JSON: ${err instanceof Error ? err.message : String(err)}`] };
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return { ok: false, problems: ['must be an object {"services": [...]}'] };
  const problems: string[] = [];
  for (const key of Object.keys(raw)) if (key !== 'services' && key !== '$schema') problems.push(`${key} is not a field (services)`);
  const list = (raw as Record<string, unknown>)['services'] ?? [];
  if (!Array.isArray(list)) return { ok: false, problems: [...problems, 'services must be an array'] };
  const services = list.map((s, i) => checkService(s, `services[${i}]`, problems));
  const seen = new Set<string>();
  for (const s of services) {
    if (s === undefined) continue;
    if (seen.has(s.name)) problems.push(`services: ${s.name} is listed twice`);
    seen.add(s.name);
  }
  return problems.length > 0 ? { ok: false, problems } : { ok: true, config: { services: services as ProjectService[] } };
}

/** The project's config at `root`, `undefined` without one; throws naming the file and every problem when it is wrong. */
export function readProjectConfig(root: string): ProjectConfig | undefined {
  const file = path.join(root, projectConfigFile);
  if (!existsSync(file)) return undefined;
  const result = parseProjectConfig(readFileSync(file, 'utf8'));
  if (!result.ok) throw new Error(`${file}: ${result.problems.join('; ')}`);
  return result.config;
}

/**
 * Adds `service` to the project's warren.config.json (creating it), keeping whatever else it says.
 * Returns false, writing nothing, when a service of that name is listed already.
 */
export async function addProjectService(root: string, service: ProjectService): Promise<boolean> {
  const config = readProjectConfig(root) ?? { services: [] };
  if (config.services.some((s) => s.name === service.name)) return false;
  const file = path.join(root, projectConfigFile);
  const raw = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>) : {};
  const entry = service.instances === 1 ? { name: service.name, main: service.main } : service;
  await writeFile(file, `${JSON.stringify({ ...raw, services: [...config.services.map((s) => (s.instances === 1 ? { name: s.name, main: s.main } : s)), entry] }, null, 2)}\n`);
  return true;
}
