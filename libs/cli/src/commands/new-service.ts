// `warren new service NAME`: writes services/NAME (scaffold/service-files.ts) into the Warren
// workspace or the npm project around the current directory (new-service-target.ts decides which,
// and what differs outside Warren's repository), refusing a bad name or a directory already there,
// and lists it in the project's warren.config.json (project-config.ts) so `npm start` runs it.
// Nothing half-written is left behind: a failure removes the new directory.
import { existsSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ExitCode, UsageError, type ExitCodeValue } from '../errors';
import { serviceFiles, type Files } from '../scaffold/service-files';
import { addProjectService, projectConfigFile, readProjectConfig } from '../project-config';
import { findTarget, hasTsx, standaloneFiles, type ScaffoldTarget } from './new-service-target';
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

/** `warren new service NAME [--root DIR] [--no-config]`: scaffolds services/NAME and prints what to do next. */
export async function newServiceCommand(s: Session, name: string, flags: { readonly root?: string; readonly cwd: string; readonly config?: boolean }): Promise<ExitCodeValue> {
  const problem = badServiceName(name);
  if (problem !== undefined) throw new UsageError(problem);
  const target = findTarget(flags.root ?? flags.cwd);
  if (target === undefined) throw new UsageError(`no Warren workspace (a package.json with "services/*" in its workspaces) nor npm project depending on @warren/amqp at or above ${flags.root ?? flags.cwd}`);
  const dir = path.join(target.root, 'services', name);
  const relative = path.relative(flags.cwd, dir) || '.';
  if (existsSync(dir)) throw new UsageError(`${relative} already exists: choose another name or remove it`);
  const files = filesFor(target, name, dir);
  // A warren.config.json that cannot be read is refused before anything is written.
  if (flags.config !== false) {
    try {
      readProjectConfig(target.root);
    } catch (err) {
      throw new UsageError(err instanceof Error ? err.message : String(err));
    }
  }
  await mkdir(path.dirname(dir), { recursive: true });
  // Not recursive: a directory made by someone else in the meantime fails here instead of being written into.
  try {
    await mkdir(dir);
  } catch (err) {
    throw new UsageError(`cannot create ${relative}: ${err instanceof Error ? err.message : String(err)}`);
  }
  try {
    for (const [file, text] of files) {
      await mkdir(path.dirname(path.join(dir, file)), { recursive: true });
      await writeFile(path.join(dir, file), text, { flag: 'wx' });
    }
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw new UsageError(`cannot write ${relative}: ${err instanceof Error ? err.message : String(err)}`);
  }
  const main = `services/${name}/src/main.ts`;
  const listed = flags.config === false ? false : await addProjectService(target.root, { name, main, instances: 1 });
  if (s.settings.json) {
    s.out(JSON.stringify({ created: dir, files: [...files.keys()], kind: target.kind, ...(listed ? { config: path.join(target.root, projectConfigFile) } : {}) }));
    return ExitCode.ok;
  }
  s.out(`${s.c.green('created')} ${relative}: ${[...files.keys()].join(', ')}`);
  if (listed) s.out(`${s.c.green('listed')} ${name} in ${path.relative(flags.cwd, path.join(target.root, projectConfigFile)) || projectConfigFile} ${s.c.dim(target.kind === 'workspace' ? '# npm start runs it' : '# its main, for npm start in a Warren checkout')}`);
  if (target.kind === 'workspace') {
    s.out(`next:\n  npm install                           ${s.c.dim('# links the new workspace package')}\n  npm test -w services/${name}\n  node --require tsx/cjs ${main}\n  npx warren call ${name}.greet '{"name":"Ada"}'`);
  } else {
    const tsx = hasTsx(target.root) ? '' : `  npm install -D tsx                    ${s.c.dim('# runs TypeScript mains')}\n`;
    s.out(`next (from ${path.relative(flags.cwd, target.root) || '.'}):\n${tsx}  npx warren start                      ${s.c.dim('# the services of warren.config.json; or: node --require tsx/cjs ' + main)}\n  npx warren call ${name}.greet '{"name":"Ada"}'`);
  }
  return ExitCode.ok;
}

/** The scaffold for `target`: as written inside Warren's workspace, made self-contained in a project. */
function filesFor(target: ScaffoldTarget, name: string, dir: string): Files {
  const files = serviceFiles(name);
  if (target.kind === 'workspace') return files;
  try {
    return standaloneFiles(files, name, target.root, dir);
  } catch (err) {
    throw new UsageError(err instanceof Error ? err.message : String(err));
  }
}
