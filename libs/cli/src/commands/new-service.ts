// `warren new service NAME`: writes services/NAME (scaffold/service-files.ts) into the Warren
// workspace around the current directory, refusing a bad name or a directory already there.
// Nothing half-written is left behind: a failure removes the new directory.
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ExitCode, UsageError, type ExitCodeValue } from '../errors';
import { serviceFiles } from '../scaffold/service-files';
import type { Session } from '../session';

/** Lower-case letters, digits and inner hyphens, 2 to 40 long: a directory, an npm name, a queue name and an identifier all at once. */
const servicePattern = /^[a-z][a-z0-9-]{0,38}[a-z0-9]$/;
/** Names the system already uses for itself. */
const reserved = new Set(['warren', 'warren-broker', 'broker']);

/** Why `name` cannot be a service's, or undefined when it can. */
export function badServiceName(name: string): string | undefined {
  if (!servicePattern.test(name) || name.includes('--')) return `a service name is 2 to 40 lower-case letters, digits and single inner hyphens, starting with a letter (e.g. billing, report-writer), got ${JSON.stringify(name)}`;
  if (reserved.has(name)) return `${name} is reserved for Warren itself`;
  return undefined;
}

/** The nearest directory at or above `from` whose package.json lists `services/*` among its workspaces. */
export function findWorkspace(from: string): string | undefined {
  for (let dir = path.resolve(from); ; dir = path.dirname(dir)) {
    try {
      const pkg = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { workspaces?: unknown };
      if (Array.isArray(pkg.workspaces) && pkg.workspaces.includes('services/*')) return dir;
    } catch {
      // no package.json here, or not JSON: look further up
    }
    if (path.dirname(dir) === dir) return undefined;
  }
}

/** `warren new service NAME [--root DIR]`: scaffolds services/NAME and prints what to do next. */
export async function newServiceCommand(s: Session, name: string, flags: { readonly root?: string; readonly cwd: string }): Promise<ExitCodeValue> {
  const problem = badServiceName(name);
  if (problem !== undefined) throw new UsageError(problem);
  const root = flags.root === undefined ? findWorkspace(flags.cwd) : findWorkspace(flags.root);
  if (root === undefined) throw new UsageError(`no Warren workspace (a package.json with "services/*" in its workspaces) at or above ${flags.root ?? flags.cwd}`);
  const dir = path.join(root, 'services', name);
  const relative = path.relative(flags.cwd, dir) || '.';
  if (existsSync(dir)) throw new UsageError(`${relative} already exists: choose another name or remove it`);
  // Not recursive: a directory made by someone else in the meantime fails here instead of being written into.
  try {
    await mkdir(dir);
  } catch (err) {
    throw new UsageError(`cannot create ${relative}: ${err instanceof Error ? err.message : String(err)}`);
  }
  const files = serviceFiles(name);
  try {
    for (const [file, text] of files) {
      await mkdir(path.dirname(path.join(dir, file)), { recursive: true });
      await writeFile(path.join(dir, file), text, { flag: 'wx' });
    }
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw new UsageError(`cannot write ${relative}: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (s.settings.json) {
    s.out(JSON.stringify({ created: dir, files: [...files.keys()] }));
    return ExitCode.ok;
  }
  s.out(`${s.c.green('created')} ${relative}: ${[...files.keys()].join(', ')}`);
  s.out(`next:\n  npm install                           ${s.c.dim('# links the new workspace package')}\n  npm test -w services/${name}\n  npx tsx services/${name}/src/main.ts\n  npx warren call ${name}.greet '{"name":"Ada"}'`);
  return ExitCode.ok;
}
