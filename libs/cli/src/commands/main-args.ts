// How `warren start` runs a service's main with node (issue 42). A TypeScript main that Node loads as
// CommonJS (the scaffold's: no "type": "module") runs under `--require tsx/cjs`: tsx compiles it in a
// require hook on the main thread. `--import tsx` would also start tsx's ESM loader hooks on a thread of
// their own, and a module loaded late (on a shutdown path) waits for that thread in Atomics.wait, which
// left services stuck for good. An ES module main (.mts, or .ts under "type": "module") can only be
// compiled by those hooks, so it keeps `--import tsx`. JavaScript runs as it is.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** The "type" of the package.json nearest to `file` (Node's rule for a .ts/.js file's module kind). */
function packageType(file: string): string | undefined {
  for (let dir = path.dirname(file); ; dir = path.dirname(dir)) {
    const manifest = path.join(dir, 'package.json');
    if (existsSync(manifest)) {
      try {
        return (JSON.parse(readFileSync(manifest, 'utf8')) as { type?: string }).type;
      } catch {
        return undefined;
      }
    }
    if (path.dirname(dir) === dir) return undefined;
  }
}

/**
 * node's arguments for `main` (relative to `root`).
 *
 * @example
 * mainArgs('/work/acme', 'services/billing/src/main.ts') // ['--require', 'tsx/cjs', 'services/billing/src/main.ts']
 */
export function mainArgs(root: string, main: string): string[] {
  if (!/\.[mc]?ts$/.test(main)) return [main];
  const esm = main.endsWith('.mts') || (main.endsWith('.ts') && packageType(path.resolve(root, main)) === 'module');
  return esm ? ['--import', 'tsx', main] : ['--require', 'tsx/cjs', main];
}
