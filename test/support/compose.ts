// Reading a compose file the way test/unit/compose*.test.ts check it (there is
// no Docker engine here): the variable substitution Compose does (from
// .env.example by default), services, their environment as a map, published
// ports, the program a command runs, and the source text a program's package
// is built from.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';

export const repoRoot = path.resolve(__dirname, '..', '..');

export interface ComposeHealthcheck {
  test?: string[] | string;
  disable?: boolean;
}

export interface ComposeService {
  image?: string;
  hostname?: string;
  build?: { context?: string; dockerfile?: string; target?: string } | string;
  command?: string[] | string;
  environment?: Record<string, string | number> | string[];
  /** Started only when one of these profiles is asked for (`--profile`). */
  profiles?: string[];
  ports?: string[];
  volumes?: string[];
  depends_on?: Record<string, { condition?: string }> | string[];
  healthcheck?: ComposeHealthcheck;
  restart?: string;
  mem_limit?: string | number;
  cpus?: string | number;
  deploy?: { replicas?: number; resources?: { limits?: { cpus?: string | number; memory?: string } } };
}

export interface ComposeFile {
  services: Record<string, ComposeService>;
  volumes?: Record<string, unknown>;
}

/** A `KEY=value` file (comments and blank lines skipped), as Compose reads `.env`. */
export function readDotEnv(file: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of readFileSync(path.join(repoRoot, file), 'utf8').split('\n')) {
    const m = /^\s*([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(line);
    if (m) out[m[1] as string] = (m[2] as string).trim();
  }
  return out;
}

/** The values a team starts from (`cp .env.example .env`). */
export const exampleEnv: Readonly<Record<string, string>> = readDotEnv('.env.example');

/** What Compose says when a `${VAR:?message}` variable is unset or empty. */
export class MissingVariableError extends Error {
  constructor(readonly variable: string, detail: string) {
    super(`required variable ${variable} is missing a value: ${detail}`);
  }
}

/**
 * Compose's interpolation: `$$` is a `$`; `${VAR}`, `$VAR`; `${VAR:-default}` (unset or empty),
 * `${VAR-default}` (unset); `${VAR:?message}` / `${VAR?message}` fail when the variable is missing.
 */
export function interpolate(text: string, vars: Readonly<Record<string, string>>): string {
  return text.replace(/\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?])([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)/g, (match, braced?: string, op?: string, arg?: string, bare?: string) => {
    if (match === '$$') return '$';
    const name = (braced ?? bare) as string;
    const value = vars[name];
    const missing = op?.startsWith(':') ? value === undefined || value === '' : value === undefined;
    if (op === undefined) return value ?? '';
    if (op.endsWith('-')) return missing ? (arg ?? '') : (value as string);
    if (missing) throw new MissingVariableError(name, arg ?? '');
    return value as string;
  });
}

/** The text of a compose file of the repository, before substitution. */
export function composeText(file: string): string {
  return readFileSync(path.join(repoRoot, file), 'utf8');
}

/**
 * A compose file of the repository with variables substituted (from `.env.example` unless `vars` says
 * otherwise) and YAML merge keys (`<<: *app`) applied, as `docker compose config` would see it.
 */
export function readCompose(file: string, vars: Readonly<Record<string, string>> = exampleEnv): ComposeFile {
  return parse(interpolate(composeText(file), vars), { merge: true }) as ComposeFile;
}

/** The same file with merge keys applied but no substitution: `${...}` references as written. */
export function readComposeRaw(file: string): ComposeFile {
  return parse(composeText(file), { merge: true }) as ComposeFile;
}

export function composeEnv(s: ComposeService): Record<string, string> {
  if (Array.isArray(s.environment)) return Object.fromEntries(s.environment.map((e) => [e.split('=')[0] ?? e, e.split('=').slice(1).join('=')]));
  return Object.fromEntries(Object.entries(s.environment ?? {}).map(([k, v]) => [k, String(v)]));
}

/** A short-syntax port mapping: `[host_ip:]published:target` (no host_ip: every interface). */
export interface PortMapping {
  readonly hostIp: string | undefined;
  readonly published: string;
  readonly target: string;
}

export function parsePort(spec: unknown): PortMapping {
  if (typeof spec !== 'string') throw new Error(`only the short port syntax is checked here, got ${JSON.stringify(spec)}`);
  const parts = spec.split(':');
  if (parts.length === 3) return { hostIp: parts[0], published: parts[1] as string, target: parts[2] as string };
  if (parts.length === 2) return { hostIp: undefined, published: parts[0] as string, target: parts[1] as string };
  return { hostIp: undefined, published: '', target: parts[0] as string };
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
