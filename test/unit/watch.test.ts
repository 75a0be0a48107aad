// `npm start -- --watch` keeps seeing a file after an editor's atomic save (write a temporary file,
// rename it over the old one: sed -i, vim, JetBrains' safe write), and sees new and deleted files
// (scripts/watch.ts). Node 20's recursive fs.watch went blind to a file after its first such save.
import { mkdirSync, mkdtempSync, renameSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { watchTrees, type TreeWatcher } from '../../scripts/watch';

let root: string;
let watcher: TreeWatcher | undefined;
/** Each report of the watcher, in order; `next()` resolves with the next one. */
let reports: ReadonlySet<string>[];
let waiting: ((changed: ReadonlySet<string>) => void) | undefined;
const next = (): Promise<ReadonlySet<string>> => new Promise((resolve) => (waiting = resolve));

beforeEach(async () => {
  root = mkdtempSync(path.join(os.tmpdir(), 'warren-watch-'));
  mkdirSync(path.join(root, 'a/src'), { recursive: true });
  mkdirSync(path.join(root, 'b/src'), { recursive: true });
  writeFileSync(path.join(root, 'a/src/main.ts'), 'export const v = 1;\n');
  reports = [];
  watcher = watchTrees(['a/src', 'b/src'], (changed) => {
    reports.push(changed);
    waiting?.(changed);
  }, { root, debounceMs: 200 });
  await watcher.ready;
});

afterEach(async () => {
  await watcher?.close();
  rmSync(root, { recursive: true, force: true });
});

/** What `sed -i` and vim do: a new file beside, renamed over the original (a new inode). */
function atomicSave(file: string, text: string): void {
  const temp = path.join(path.dirname(file), `.${path.basename(file)}.tmp${Math.random().toString(36).slice(2)}`);
  writeFileSync(temp, text);
  renameSync(temp, file);
}

it('reports every atomic save of the same file, then a new file and a deleted one, in the right tree', async () => {
  const main = path.join(root, 'a/src/main.ts');
  for (let i = 2; i <= 4; i += 1) {
    const seen = next();
    atomicSave(main, `export const v = ${i};\n`);
    expect([...(await seen)]).toEqual(['a/src']);
  }
  let seen = next();
  mkdirSync(path.join(root, 'b/src/deep'));
  writeFileSync(path.join(root, 'b/src/deep/new.ts'), 'export {};\n');
  expect([...(await seen)]).toEqual(['b/src']);
  seen = next();
  atomicSave(path.join(root, 'b/src/deep/new.ts'), 'export const x = 1;\n');
  expect([...(await seen)]).toEqual(['b/src']);
  seen = next();
  unlinkSync(main);
  expect([...(await seen)]).toEqual(['a/src']);
  // Each report named only the tree that changed.
  expect(reports.every((r) => r.size === 1)).toBe(true);
});

it('ignores files that are not sources (an editor swap file)', async () => {
  writeFileSync(path.join(root, 'a/src/.main.ts.swp'), 'x');
  const seen = next();
  writeFileSync(path.join(root, 'b/src/later.json'), '{}');
  expect([...(await seen)]).toEqual(['b/src']);
  expect(reports).toHaveLength(1);
});
