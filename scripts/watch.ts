// `npm start -- --watch`: which source trees to watch, and a debounced watcher over them.
//
// chokidar rather than Node's own fs.watch: on Linux fs.watch watches inodes, so an editor's
// atomic save (write a temporary file, rename it over the old one: `sed -i`, vim, JetBrains'
// safe write) leaves it watching the replaced inode and blind to every later save of that file.
// chokidar re-attaches after a rename, sees new and deleted files and new directories, and folds
// an unlink-then-add of the same path into one change (`atomic`). The debounce below folds an
// editor's write-rename-chmod burst, or a `git checkout` touching many files, into one restart.
import path from 'node:path';
import { watch } from 'chokidar';

/** Quiet time after the last change before restarting. @default 300 */
export const watchDebounceMs = 300;

/** Files whose change restarts: sources and JSON; editors' swap and backup files are not. */
const watched = /\.(ts|tsx|mts|cts|js|mjs|cjs|json)$/;

export interface TreeWatcher {
  /** Resolves once the initial scan is done: changes from then on are reported. */
  readonly ready: Promise<void>;
  close(): Promise<void>;
}

/**
 * Watches each directory of `trees` (recursively) and calls `onChange` with the trees that
 * changed once `debounceMs` pass without another change: a file changed, added or removed
 * (however an editor saved it).
 *
 * @example
 * const w = watchTrees(['services/calculator/src'], (changed) => restart(changed), { root });
 */
export function watchTrees(trees: readonly string[], onChange: (changed: ReadonlySet<string>) => void, options: { readonly root: string; readonly debounceMs?: number }): TreeWatcher {
  const debounceMs = options.debounceMs ?? watchDebounceMs;
  let pending = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  const flush = (): void => {
    timer = undefined;
    const changed = pending;
    pending = new Set();
    onChange(changed);
  };
  const absolute = trees.map((tree) => ({ tree, dir: path.join(options.root, tree) }));
  const watcher = watch(
    absolute.map((t) => t.dir),
    {
      ignoreInitial: true,
      // Directories pass (to be descended into); files only when they are sources.
      ignored: (file, stats) => stats?.isFile() === true && !watched.test(file),
    },
  );
  watcher.on('all', (event, file) => {
    if ((event === 'add' || event === 'change' || event === 'unlink') && !watched.test(file)) return;
    const owner = absolute.find((t) => file === t.dir || file.startsWith(t.dir + path.sep));
    if (owner === undefined) return;
    pending.add(owner.tree);
    if (timer !== undefined) clearTimeout(timer);
    timer = setTimeout(flush, debounceMs);
  });
  // A watched directory removed (a branch switch) is reported here; the others keep watching.
  watcher.on('error', () => undefined);
  const ready = new Promise<void>((resolve) => watcher.once('ready', () => resolve()));
  return {
    ready,
    async close() {
      if (timer !== undefined) clearTimeout(timer);
      await watcher.close();
    },
  };
}
