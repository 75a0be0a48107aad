// Which of the repository's packages are publishable, and in which order, derived from the
// root package.json's workspaces and each package's `private` flag: never a hand-written list,
// so a new library cannot be left out of the tarballs (docs/running.md once omitted two).
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';

/** The fields of a package.json this reads and rewrites. */
export interface Manifest {
  readonly name: string;
  readonly version: string;
  readonly private?: boolean;
  readonly dependencies?: Readonly<Record<string, string>>;
  readonly optionalDependencies?: Readonly<Record<string, string>>;
  readonly peerDependencies?: Readonly<Record<string, string>>;
  readonly [field: string]: unknown;
}

export interface WorkspacePackage {
  /** Its directory relative to the root, e.g. `libs/amqp`. */
  readonly dir: string;
  readonly manifest: Manifest;
}

/** The scope every Warren package is published under. */
export const scope = '@warren/';

const readManifest = (file: string): Manifest => JSON.parse(readFileSync(file, 'utf8')) as Manifest;

/** Every workspace package of `root`: its `workspaces` entries, a trailing `/*` read as every folder with a package.json. */
export function workspacePackages(root: string): WorkspacePackage[] {
  const { workspaces } = readManifest(path.join(root, 'package.json')) as { workspaces?: unknown };
  if (!Array.isArray(workspaces)) throw new Error(`${root}/package.json has no workspaces array`);
  const dirs = workspaces.flatMap((w: unknown): string[] => {
    if (typeof w !== 'string') return [];
    if (!w.endsWith('/*')) return [w];
    const parent = w.slice(0, -2);
    return readdirSync(path.join(root, parent), { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => `${parent}/${d.name}`);
  });
  return dirs
    .filter((dir) => existsSync(path.join(root, dir, 'package.json')))
    .map((dir) => ({ dir, manifest: readManifest(path.join(root, dir, 'package.json')) }));
}

/** The `@warren/*` packages `m` needs at run time (dependencies, optional and peer): what its tarball must name. */
export function warrenDependencies(m: Manifest): string[] {
  const names = [m.dependencies, m.optionalDependencies, m.peerDependencies].flatMap((deps) => Object.keys(deps ?? {}));
  return [...new Set(names.filter((n) => n.startsWith(scope)))].sort();
}

/**
 * The publishable packages (not `private`), each after the `@warren/*` packages it depends on.
 * Throws when one depends on a private or unknown `@warren/*` package, or on a cycle.
 */
export function publishablePackages(root: string): WorkspacePackage[] {
  const all = workspacePackages(root).filter((p) => p.manifest.private !== true);
  const byName = new Map(all.map((p) => [p.manifest.name, p]));
  const ordered: WorkspacePackage[] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (p: WorkspacePackage, from: readonly string[]): void => {
    const name = p.manifest.name;
    if (state.get(name) === 'done') return;
    if (state.get(name) === 'visiting') throw new Error(`@warren packages depend on each other in a circle: ${[...from, name].join(' → ')}`);
    state.set(name, 'visiting');
    for (const dep of warrenDependencies(p.manifest)) {
      const target = byName.get(dep);
      if (target === undefined) throw new Error(`${name} depends on ${dep}, which is no publishable workspace package (private, or missing)`);
      visit(target, [...from, name]);
    }
    state.set(name, 'done');
    ordered.push(p);
  };
  for (const p of [...all].sort((a, b) => a.manifest.name.localeCompare(b.manifest.name))) visit(p, []);
  return ordered;
}

/** `@warren/amqp` 0.1.0 → `warren-amqp-0.1.0.tgz`, the file name `npm pack` gives it. */
export function tarballName(m: Pick<Manifest, 'name' | 'version'>): string {
  return `${m.name.replace(/^@/, '').replace('/', '-')}-${m.version}.tgz`;
}

/** `m` with every `@warren/*` dependency pointed at its tarball (`file:` + the path `tarballOf` gives). */
export function pointAtTarballs(m: Manifest, tarballOf: (name: string) => string): Manifest {
  const rewrite = (deps: Readonly<Record<string, string>> | undefined): Record<string, string> | undefined =>
    deps === undefined ? undefined : Object.fromEntries(Object.entries(deps).map(([n, spec]) => [n, n.startsWith(scope) ? `file:${tarballOf(n)}` : spec]));
  const out: Record<string, unknown> = { ...m };
  for (const field of ['dependencies', 'optionalDependencies', 'peerDependencies'] as const) {
    if (m[field] !== undefined) out[field] = rewrite(m[field]);
  }
  return out as Manifest;
}
