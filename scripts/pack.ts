// `npm run pack -- --out DIR`: installable tarballs of every publishable package, for a project
// outside this repository while the packages are on no registry (docs/running.md "Using the
// packages from another project"). Builds dist/ (`npm run build`), packs each package in
// dependency order, and rewrites each tarball's `@warren/*` dependencies to `file:` paths of
// the tarballs beside it, so installing them never asks a registry for a `@warren/*` name (one a
// registry answered would be someone else's package). Prints the `npm install` line to run.
//
// --out DIR   where the tarballs go, relative to where npm was run from (INIT_CWD); created if
//             missing. @default warren-packages
// --no-build  packs the dist/ there is (the pack test builds once).
//
// The tarballs name each other by absolute path: moved elsewhere, they must be packed again.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { pointAtTarballs, publishablePackages, tarballName, type Manifest } from './packages';

const root = path.resolve(__dirname, '..');
const exec = promisify(execFile);

/** `npm run pack` arguments. */
export function parsePackArgs(argv: readonly string[], cwd: string): { readonly out: string; readonly build: boolean } {
  let out = 'warren-packages';
  let build = true;
  for (let i = 0; i < argv.length; i += 1) {
    const a = argv[i];
    if (a === '--no-build') build = false;
    else if (a === '--out' && argv[i + 1] !== undefined) out = argv[(i += 1)] as string;
    else if (a?.startsWith('--out=') === true) out = a.slice('--out='.length);
    else throw new RangeError(`unknown argument ${String(a)} (npm run pack takes --out DIR and --no-build)`);
  }
  return { out: path.resolve(cwd, out), build };
}

async function main(): Promise<void> {
  const { out, build } = parsePackArgs(process.argv.slice(2), process.env['INIT_CWD'] || process.cwd());
  const packages = publishablePackages(root);
  if (build) {
    process.stderr.write('pack: npm run build\n');
    await exec('npm', ['run', 'build'], { cwd: root, maxBuffer: 64 * 1024 * 1024 });
  }
  mkdirSync(out, { recursive: true });
  const byName = new Map(packages.map((p) => [p.manifest.name, p.manifest]));
  const tarballOf = (name: string): string => path.join(out, tarballName(byName.get(name) as Manifest));
  const work = mkdtempSync(path.join(os.tmpdir(), 'warren-pack-'));
  try {
    for (const p of packages) {
      // npm pack as published (files, LICENSE, bin), then the manifest inside rewritten and packed again.
      const first = path.join(work, p.manifest.name.replace('/', '+'));
      mkdirSync(first);
      await exec('npm', ['pack', '--ignore-scripts', '--silent', '--pack-destination', first, '-w', p.dir], { cwd: root });
      await exec('tar', ['-xzf', path.join(first, tarballName(p.manifest)), '-C', first]);
      const manifestFile = path.join(first, 'package', 'package.json');
      const manifest = JSON.parse(readFileSync(manifestFile, 'utf8')) as Manifest;
      writeFileSync(manifestFile, `${JSON.stringify(pointAtTarballs(manifest, tarballOf), null, 2)}\n`);
      // From a directory outside the repository: no workspace around it.
      await exec('npm', ['pack', '--ignore-scripts', '--silent', '--pack-destination', out, path.join(first, 'package')], { cwd: work });
      process.stderr.write(`pack: ${p.manifest.name} → ${tarballOf(p.manifest.name)}\n`);
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  const files = packages.map((p) => tarballOf(p.manifest.name));
  process.stdout.write(`${packages.length} packages packed into ${out}. In your project, install them with:\n\nnpm install ${files.join(' ')}\n`);
}

if (require.main === module) {
  main().catch((err: unknown) => {
    process.stderr.write(`pack: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
}
