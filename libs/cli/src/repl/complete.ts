// Tab completion of a REPL line from the catalogue: commands and methods first, then the
// method's param names as `name=`, service names where a command takes one.
import type { Catalogue, CatalogueEntry } from './catalogue';

/** The REPL's commands, as completion offers them (shell.ts runs them). */
export const replCommands = ['call', 'notify', 'batch', 'services', 'methods', 'inflight', 'status', 'cancel', 'dlq', 'refresh', 'help', 'exit'] as const;
const dlqVerbs = ['ls', 'show', 'replay', 'purge'] as const;

/** What readline's completer returns: the candidates, and the part of the line they replace. */
export type Completion = [string[], string];

const startingWith = (prefix: string, candidates: Iterable<string>): string[] => [...new Set([...candidates].filter((c) => c.startsWith(prefix)))];

/** `name=` for each param of `entry` not given yet on the line. */
function paramCandidates(entry: CatalogueEntry | undefined, given: readonly string[]): string[] {
  if (entry === undefined) return [];
  const used = new Set(given.map((w) => w.split('=')[0]));
  return entry.params.filter((p) => !used.has(p)).map((p) => `${p}=`);
}

/**
 * Completes the line up to the cursor: the first word from commands and method names (a
 * method's name alone calls it), a method's name after `call`/`notify`, then its params as
 * `name=`; services after `inflight`, `dlq ls|show|replay|purge`.
 *
 * @example complete('call sub', catalogue) // [['subtract'], 'sub']
 * @example complete('call subtract min', catalogue) // [['minuend='], 'min']
 */
export function complete(line: string, catalogue: Catalogue): Completion {
  const parts = line.trimStart().split(/\s+/);
  const partial = parts[parts.length - 1] ?? '';
  const before = parts.slice(0, -1);
  const method = (name: string | undefined): CatalogueEntry | undefined => catalogue.methods.find((m) => m.name === name);
  const notification = (name: string | undefined): CatalogueEntry | undefined => catalogue.notifications.find((m) => m.name === name);
  const candidates = ((): string[] => {
    const [first, second] = before;
    if (first === undefined) return [...replCommands, ...catalogue.methods.map((m) => m.name)];
    // Params are JSON or name=value words: a word with a JSON bracket in it is not completed.
    if (/[[{"]/.test(before.slice(1).join(' '))) return [];
    switch (first) {
      case 'call':
        return second === undefined ? catalogue.methods.map((m) => m.name) : paramCandidates(method(second), before.slice(2));
      case 'notify':
        return second === undefined ? catalogue.notifications.map((n) => n.name) : paramCandidates(notification(second), before.slice(2));
      case 'inflight':
        return before.length === 1 ? [...catalogue.services] : [];
      case 'dlq':
        if (second === undefined) return [...dlqVerbs];
        return before.length === 2 ? [...catalogue.services] : [];
      default:
        return paramCandidates(method(first), before.slice(1));
    }
  })();
  return [startingWith(partial, candidates).sort(), partial];
}
