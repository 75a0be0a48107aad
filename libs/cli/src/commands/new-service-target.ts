// Where `warren new service NAME` writes, and what changes outside Warren's repository. Two kinds
// of place at or above the directory:
// - Warren's own workspace (a package.json whose workspaces list `services/*`): services/NAME as a
//   workspace package, built and tested with the repository's configs (as the example services);
// - else the nearest npm project that depends on `@warren/amqp` (a team's own repository, the packages installed
//   from `npm run pack`'s tarballs): services/NAME with a self-contained tsconfig, depending on the
//   `@warren/*` packages the project already has, by the same specs (so no registry is asked).
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Files } from '../scaffold/service-files';

export type ScaffoldTarget = { readonly kind: 'workspace'; readonly root: string } | { readonly kind: 'project'; readonly root: string };

interface PackageJson {
  readonly name?: string;
  readonly version?: string;
  readonly workspaces?: unknown;
  readonly dependencies?: Record<string, string>;
  readonly devDependencies?: Record<string, string>;
  readonly scripts?: Record<string, string>;
  readonly [field: string]: unknown;
}

function readPackage(dir: string): PackageJson | undefined {
  try {
    return JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as PackageJson;
  } catch {
    return undefined; // no package.json here, or not JSON
  }
}

/**
 * The Warren workspace at or above `from`, else the nearest project depending on @warren/amqp there.
 * The workspace first: its own packages (libs/cli, services/*) depend on @warren/amqp too.
 */
export function findTarget(from: string): ScaffoldTarget | undefined {
  let project: string | undefined;
  for (let dir = path.resolve(from); ; dir = path.dirname(dir)) {
    const pkg = readPackage(dir);
    if (Array.isArray(pkg?.workspaces) && pkg.workspaces.includes('services/*')) return { kind: 'workspace', root: dir };
    if (project === undefined && (pkg?.dependencies?.['@warren/amqp'] !== undefined || pkg?.devDependencies?.['@warren/amqp'] !== undefined)) project = dir;
    if (path.dirname(dir) === dir) return project === undefined ? undefined : { kind: 'project', root: project };
  }
}

/**
 * The spec the service's package.json gives `dep`, from the project at `root` written for a
 * package in `serviceDir`: the project's own spec (a relative `file:` one re-pointed from the
 * service's directory), else `^` the installed version; undefined when the project has neither.
 */
function projectSpec(root: string, serviceDir: string, project: PackageJson, dep: string): string | undefined {
  const own = project.dependencies?.[dep] ?? project.devDependencies?.[dep];
  if (own !== undefined) {
    if (!own.startsWith('file:')) return own;
    const target = own.slice('file:'.length);
    return path.isAbsolute(target) ? own : `file:${path.relative(serviceDir, path.resolve(root, target)).split(path.sep).join('/')}`;
  }
  const installed = readPackage(path.join(root, 'node_modules', dep));
  return installed?.version === undefined ? undefined : `^${installed.version}`;
}

/** A self-contained tsconfig: nothing of Warren's repository to extend or reference. */
const standaloneTsconfig = `${JSON.stringify(
  {
    compilerOptions: { target: 'es2022', module: 'node16', moduleResolution: 'node16', strict: true, esModuleInterop: true, skipLibCheck: true, sourceMap: true, declaration: true, rootDir: 'src', outDir: 'dist', types: ['node'] },
    include: ['src'],
  },
  null,
  2,
)}\n`;

/**
 * The scaffold's files for a project outside Warren's repository: package.json depending on the
 * project's own @warren packages and building with its own tsconfig. Throws a message naming the
 * `@warren/*` packages the scaffold imports that the project does not have.
 */
export function standaloneFiles(files: Files, name: string, root: string, serviceDir: string): Files {
  const project = readPackage(root) ?? {};
  const generated = JSON.parse(files.get('package.json') ?? '{}') as PackageJson;
  const missing: string[] = [];
  const respec = (deps: Record<string, string> | undefined): Record<string, string> =>
    Object.fromEntries(
      Object.entries(deps ?? {}).map(([dep, range]) => {
        if (!dep.startsWith('@warren/')) return [dep, range];
        const spec = projectSpec(root, serviceDir, project, dep);
        if (spec === undefined) missing.push(dep);
        return [dep, spec ?? range];
      }),
    );
  const dependencies = respec(generated.dependencies);
  const devDependencies = respec(generated.devDependencies);
  if (missing.length > 0) throw new Error(`the scaffold imports ${missing.join(', ')}, which this project does not have: install them (docs/running.md "Using the packages from another project")`);
  const { test: _test, ...scripts } = generated.scripts ?? {};
  const pkg = { ...generated, name: `${project.name ?? 'project'}-${name}`.replace(/^@[^/]+\//, ''), scripts: { ...scripts, build: 'tsc -p .' }, dependencies, devDependencies };
  const out = new Map(files);
  out.set('package.json', `${JSON.stringify(pkg, null, 2)}\n`);
  out.set('tsconfig.json', standaloneTsconfig);
  return out;
}

/** Whether `dir` has `@warren/cli`'s runner for TypeScript mains (tsx) installed, to say how to run the service. */
export function hasTsx(root: string): boolean {
  return existsSync(path.join(root, 'node_modules', 'tsx', 'package.json'));
}
