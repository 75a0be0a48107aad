// The REPL's history file: where it lives, read at start (bounded), written after each line.
// It may hold params, so it is private to the user (0600 in a 0700 directory).
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { envGiven } from '@warren/config';

/** Most lines kept, in memory and in the file. @default 1000 */
export const historyLimit = 1000;

/**
 * The history file: WARREN_REPL_HISTORY when set (`off` or empty: none), else
 * `$XDG_STATE_HOME/warren/repl_history`, else `~/.local/state/warren/repl_history`.
 */
export function historyPath(env: Readonly<Record<string, string | undefined>>, home: string = homedir()): string | undefined {
  const named = envGiven(env, 'WARREN_REPL_HISTORY');
  if (named !== undefined) return named.trim() === '' || named.trim() === 'off' ? undefined : named;
  const state = env['XDG_STATE_HOME']?.trim() || path.join(home, '.local', 'state');
  return path.join(state, 'warren', 'repl_history');
}

/** The saved lines, newest first (readline's order), at most `limit`; none when the file is absent or unreadable. */
export function loadHistory(file: string | undefined, limit = historyLimit): string[] {
  if (file === undefined) return [];
  try {
    return readFileSync(file, 'utf8').split('\n').filter((l) => l.trim() !== '').slice(-limit).reverse();
  } catch {
    return [];
  }
}

/**
 * Writes `newestFirst` (readline's history) oldest first, at most `limit` lines. A failure to
 * write (read-only home, say) is reported once by the caller and never stops the REPL.
 */
export function saveHistory(file: string, newestFirst: readonly string[], limit = historyLimit): void {
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const lines = newestFirst.slice(0, limit).reverse();
  writeFileSync(file, lines.length === 0 ? '' : `${lines.join('\n')}\n`, { mode: 0o600 });
}
