/**
 * How the bench starts its child processes (each target's service and caller): as users deploy them,
 * compiled JavaScript under plain `node`, the `@warren/*` packages from their `dist/` builds. Before a
 * run `buildChildren` compiles every tree involved (this one, and a `BENCH_BASE_TREE` for a before/after
 * comparison): the tree's own packages with its own TypeScript (`tsc -b tsconfig.build.json`), then
 * this tree's child entry points into `<tree>/bench/dist`, where they resolve `@warren/*` through that
 * tree's node_modules. `BENCH_SOURCE=1` runs the TypeScript sources under tsx instead (no build; tsx's
 * loader thread and per-closure `__name` wrappers cost a tenth or more of the JavaScript's CPU per call).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { profileArgs } from './profile';

/** The bench's child entry points (bench/<name>.ts). */
export type ChildProgram = 'warren-server' | 'caller' | 'amqp-baseline-server' | 'amqp-guarded-server' | 'peer-service' | 'gateway-floor';

const thisTree = resolve(__dirname, '..');
const fromSource = (): boolean => process.env['BENCH_SOURCE'] === '1';

/** `node` arguments and working directory that run `program` of `tree` (default: this tree). */
export function childCommand(program: ChildProgram, role: 'service' | 'caller', tree = thisTree): { args: string[]; cwd: string } {
  return { args: [...profileArgs(role), ...childEntry(program, tree)], cwd: tree };
}

/** The `node` arguments naming `program`'s entry point: its build, or its source under tsx. */
export function childEntry(program: ChildProgram, tree = thisTree): string[] {
  return fromSource() ? ['--import', 'tsx', join(tree, 'bench', `${program}.ts`)] : [join(tree, 'bench', 'dist', `${program}.js`)];
}

/** Compiles what the children of a run need, in every tree named (see the file's comment). */
export function buildChildren(trees: readonly string[]): void {
  if (fromSource()) return;
  const tsc = (tree: string): string => join(tree, 'node_modules', '.bin', 'tsc');
  for (const tree of new Set([thisTree, ...trees.map((t) => resolve(t))])) {
    console.error(`# building ${tree} (tsc -b tsconfig.build.json, then the bench's child programs)`);
    forgetMissingBuilds(tree);
    execFileSync(tsc(tree), ['-b', join(tree, 'tsconfig.build.json')], { stdio: 'inherit' });
    execFileSync(tsc(thisTree), ['-p', join(thisTree, 'bench', 'tsconfig.children.json'), '--outDir', join(tree, 'bench', 'dist')], { stdio: 'inherit' });
  }
}

/** A package whose dist/ was deleted but whose build info says it is up to date would never be rebuilt by `tsc -b`. */
function forgetMissingBuilds(tree: string): void {
  const packages = ['libs', 'services'].flatMap((dir) => (existsSync(join(tree, dir)) ? readdirSync(join(tree, dir)).map((name) => join(tree, dir, name)) : []));
  for (const pkg of [...packages, join(tree, 'broker')]) {
    const info = join(pkg, 'tsconfig.tsbuildinfo');
    if (existsSync(info) && !existsSync(join(pkg, 'dist'))) rmSync(info);
  }
}
