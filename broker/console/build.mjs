// Builds the console's bundle into broker/dist/console-assets (served by the
// broker at /console/assets/). Run by `npm ci` (the root `prepare` script),
// `npm run build` and `npm run build:console`; the browser tests run it too.
// Offline by design: Preact is bundled, nothing is fetched from a CDN.
import { build } from 'esbuild';
import { copyFile, mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const out = path.resolve(here, '..', 'dist', 'console-assets');

await rm(out, { recursive: true, force: true });
await mkdir(out, { recursive: true });
await build({
  entryPoints: { app: path.join(here, 'src', 'main.tsx') },
  outdir: out,
  bundle: true,
  minify: true,
  format: 'iife',
  target: ['chrome110', 'firefox110', 'safari16'],
  jsx: 'automatic',
  jsxImportSource: 'preact',
  legalComments: 'none',
  logLevel: 'warning',
});
await build({ entryPoints: { app: path.join(here, 'src', 'styles.css') }, outdir: out, bundle: true, minify: true, logLevel: 'warning' });
await copyFile(path.join(here, 'src', 'favicon.svg'), path.join(out, 'favicon.svg'));
process.stdout.write(`console built into ${path.relative(process.cwd(), out) || out}\n`);
