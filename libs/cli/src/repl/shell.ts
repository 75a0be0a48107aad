// `warren repl`: an interactive shell over one session (one connection, kept between lines),
// on Node's readline: line editing, Tab completion from discovery, a history file. Without a
// terminal (a pipe, a script) it reads lines and runs them the same way, with no prompt.
import { createInterface } from 'node:readline';
import { ExitCode, UsageError, type ExitCodeValue } from '../errors';
import { Session, type Io, type Settings } from '../session';
import type { Catalogue } from './catalogue';
import { emptyCatalogue } from './catalogue';
import { runLine, type ReplState } from './commands';
import { complete } from './complete';
import { loadCatalogue } from './discover';
import { historyLimit, historyPath, loadHistory, saveHistory } from './history';

export interface ReplOptions {
  /** Line editing, Tab completion and history (readline's terminal mode). @default whether stdout is a terminal */
  readonly terminal?: boolean;
  /** The history file; `undefined` keeps none. @default historyPath(io.env): WARREN_REPL_HISTORY, else $XDG_STATE_HOME/warren/repl_history, else ~/.local/state/warren/repl_history */
  readonly historyFile?: string | undefined;
  /** Most history lines kept. @default 1000 */
  readonly historySize?: number;
  /** Ends the REPL from outside (SIGTERM in the bin). @default never */
  readonly stop?: AbortSignal;
}

const isStream = (v: unknown): v is NodeJS.WritableStream => typeof (v as { on?: unknown }).on === 'function' && typeof (v as { write?: unknown }).write === 'function';

function describe(catalogue: Catalogue, problem: string | undefined): string {
  if (catalogue.source === 'none') return `no discovery (${problem ?? 'nothing answered'}): commands complete, methods do not; refresh tries again`;
  return `${catalogue.methods.length} methods, ${catalogue.notifications.length} notifications (from ${catalogue.source})`;
}

/**
 * Runs the REPL on the session's stdin/stdout until end of input, `exit` or `options.stop`;
 * resolves 0 at a terminal, else (a script) with the exit code of the last line run (0 after
 * `exit`). The session stays open (its caller closes it).
 */
export async function replCommand(s: Session, options: ReplOptions = {}): Promise<ExitCodeValue> {
  const output = s.io.stdout;
  if (!isStream(output)) throw new UsageError('warren repl needs a stream to write to');
  const terminal = options.terminal ?? s.io.stdout.isTTY === true;
  const file = 'historyFile' in options ? options.historyFile : historyPath(s.io.env);
  const limit = options.historySize ?? historyLimit;
  const closing = new AbortController();
  const stopped = (): void => closing.abort();
  options.stop?.addEventListener('abort', stopped, { once: true });

  let catalogue: Catalogue = emptyCatalogue;
  const refresh = async (): Promise<string> => {
    const loaded = await loadCatalogue(s);
    catalogue = loaded.catalogue;
    return describe(catalogue, loaded.problem);
  };
  const state: ReplState = { catalogue: () => catalogue, refresh, stop: closing.signal };

  const namespace = s.settings.namespace === 'warren' ? '' : `:${s.settings.namespace}`;
  const rl = createInterface({
    input: s.io.stdin,
    output,
    terminal,
    prompt: terminal ? `${s.c.cyan(`warren${namespace}`)}> ` : '',
    completer: (line: string) => complete(line, catalogue),
    history: terminal ? loadHistory(file, limit) : [],
    historySize: terminal ? limit : 0,
    removeHistoryDuplicates: true,
  });
  let historyBroken = false;
  rl.on('history', (lines: string[]) => {
    if (file === undefined || historyBroken) return;
    try {
      saveHistory(file, lines, limit);
    } catch (err) {
      historyBroken = true;
      s.err(s.c.dim(`history not saved to ${file}: ${err instanceof Error ? err.message : String(err)}`));
    }
  });
  // Input may end (a piped script, Ctrl-D) while lines read before it still run; a prompt after that
  // throws ERR_USE_AFTER_CLOSE from Node 24 on (Node 20 ignored it).
  let open = true;
  rl.once('close', () => (open = false));
  const prompt = (): void => {
    if (open) rl.prompt();
  };
  // Ctrl-C clears the line (or says how to leave) instead of ending the shell.
  rl.on('SIGINT', () => {
    const typed = rl.line !== '';
    output.write(typed ? '^C\n' : `\n${s.c.dim('(Ctrl-D or exit to leave)')}\n`);
    rl.write(null, { ctrl: true, name: 'u' });
    prompt();
  });
  closing.signal.addEventListener('abort', () => rl.close(), { once: true });
  // Taken now, not when the loop starts: lines read during discovery (a piped script) are kept for it.
  const lines = rl[Symbol.asyncIterator]();

  let code: ExitCodeValue = ExitCode.ok;
  try {
    if (terminal) s.out(s.c.dim(`warren repl: ${await refresh()}. help lists the commands.`));
    else await refresh();
    prompt();
    for await (const line of lines) {
      const outcome = await runLine(s, state, line);
      if (outcome === 'exit') {
        code = ExitCode.ok;
        break;
      }
      code = outcome;
      if (closing.signal.aborted) break;
      prompt();
    }
  } finally {
    options.stop?.removeEventListener('abort', stopped);
    rl.close();
  }
  // At a terminal every error was seen as it happened; a script's caller learns of its last one.
  return terminal ? ExitCode.ok : code;
}

/**
 * The REPL as a library: a session over `io` (its stdin and stdout are the REPL's streams,
 * errors go to its stderr) with `settings` (see resolveSettings), closed when the REPL ends.
 *
 * @example
 * const io = { stdin: input, stdout: output, stderr: output, env: process.env };
 * const code = await runRepl(io, resolveSettings(io, { via: 'gateway' }), { terminal: true, historyFile: undefined });
 */
export async function runRepl(io: Io, settings: Settings, options: ReplOptions = {}): Promise<ExitCodeValue> {
  const s = new Session(io, settings);
  try {
    return await replCommand(s, options);
  } finally {
    await s.close();
  }
}
