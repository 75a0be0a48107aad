// Reading a compose file the way test/unit/compose*.test.ts check it (there is
// no Docker engine here): services, their environment as a map, the program
// a command runs, and the source text a program's package is built from.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';

export const repoRoot = path.resolve(__dirname, '..', '..');

export interface ComposeService {
  image?: string;
  hostname?: string;
  build?: { context?: string; dockerfile?: string; target?: string } | string;
  command?: string[] | string;
  environment?: Record<string, string | number> | string[];
  ports?: string[];
  volumes?: string[];
  depends_on?: Record<string, { condition?: string }> | string[];
  healthcheck?: { test?: string[] | string };
  deploy?: { replicas?: number };
}

/** A compose file of the repository, with YAML merge keys (`<<: *app`) applied. */
export function readCompose(file: string): { services: Record<string, ComposeService> } {
  return parse(readFileSync(path.join(repoRoot, file), 'utf8'), { merge: true }) as { services: Record<string, ComposeService> };
}

export function composeEnv(s: ComposeService): Record<string, string> {
  if (Array.isArray(s.environment)) return Object.fromEntries(s.environment.map((e) => [e.split('=')[0] ?? e, e.split('=').slice(1).join('=')]));
  return Object.fromEntries(Object.entries(s.environment ?? {}).map(([k, v]) => [k, String(v)]));
}

/** `node services/x/dist/main.js` → the package folder and the TypeScript source it is built from. */
export function composeProgram(s: ComposeService): { pkg: string; source: string } {
  const command = Array.isArray(s.command) ? s.command : (s.command ?? '').split(/\s+/);
  if (command[0] !== 'node') throw new Error(`command ${JSON.stringify(command)} does not start with node`);
  const script = command[1] ?? '';
  const match = /^(.+)\/dist\/(.+)\.js$/.exec(script);
  if (!match) throw new Error(`command ${JSON.stringify(command)} does not run a dist/*.js file`);
  return { pkg: match[1] as string, source: path.join(match[1] as string, 'src', `${match[2] as string}.ts`) };
}

/** Every .ts file under `dir`, joined: what a program could read an environment variable in. */
export function sourceText(dir: string): string {
  const out: string[] = [];
  const walk = (d: string): void => {
    for (const name of readdirSync(d)) {
      const p = path.join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (p.endsWith('.ts')) out.push(readFileSync(p, 'utf8'));
    }
  };
  walk(dir);
  return out.join('\n');
}

/** Whether the program's code (and readServiceEnv, which reads the shared settings for it) reads `name`. */
export function readsEnv(s: ComposeService, name: string): boolean {
  const own = sourceText(path.join(repoRoot, composeProgram(s).pkg, 'src'));
  const code = own.includes('readServiceEnv') ? own + readFileSync(path.join(repoRoot, 'libs', 'amqp', 'src', 'runtime', 'service-env.ts'), 'utf8') : own;
  return code.includes(`'${name}'`) || code.includes(`${name}:`);
}
