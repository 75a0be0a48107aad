// `npm start -- --watch`: which source trees to watch, and a debounced watcher over them.
//
// Node's own fs.watch (recursive, supported on Linux since Node 19.1) rather than chokidar: the
// trees are a handful of small src/ directories, any change in a tree restarts the same processes
// (so which file changed, and how an editor saved it, do not matter), and the debounce below
// folds an editor's write-rename-chmod burst, or a `git checkout` touching many files, into one
// restart. chokidar's extras (polling, awaitWriteFinish, globbing) would buy nothing here but a dependency.
import { watch, type FSWatcher } from 'node:fs';
import path from 'node:path';

/** Quiet time after the last change before restarting. @default 300 */
export const watchDebounceMs = 300;

/** Files whose change restarts: sources and JSON; editors' swap and backup files are not. */
const watched = /\.(ts|tsx|mts|cts|js|mjs|cjs|json)$/;

export interface TreeWatcher {
  close(): void;
}

/**
 * Watches each directory of `trees` (recursively) and calls `onChange` with the trees that
 * changed once `debounceMs` pass without another change. A tree that cannot be watched throws.
 *
 * @example
 * const w = watchTrees(['services/calculator/src'], (changed) => restart(changed), { root });
 */
export function watchTrees(trees: readonly string[], onChange: (changed: ReadonlySet<string>) => void, options: { readonly root: string; readonly debounceMs?: number }): TreeWatcher {
  const debounceMs = options.debounceMs ?? watchDebounceMs;
  let pending = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  const watchers: FSWatcher[] = [];
  const flush = (): void => {
    timer = undefined;
    const changed = pending;
    pending = new Set();
    onChange(changed);
  };
  try {
    for (const tree of trees) {
      const watcher = watch(path.join(options.root, tree), { recursive: true }, (_event, file) => {
        if (file !== null && !watched.test(file)) return;
        pending.add(tree);
        if (timer !== undefined) clearTimeout(timer);
        timer = setTimeout(flush, debounceMs);
      });
      // A watched directory removed (a branch switch) is reported here; the others keep watching.
      watcher.on('error', () => undefined);
      watchers.push(watcher);
    }
  } catch (err) {
    for (const w of watchers) w.close();
    throw err;
  }
  return {
    close() {
      if (timer !== undefined) clearTimeout(timer);
      for (const w of watchers) w.close();
    },
  };
}
