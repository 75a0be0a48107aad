// Drives `runRepl` as a person at a terminal would: keys written to its input (Tab, Enter,
// arrows), its output read back with the terminal's escape codes stripped. Each step waits for
// what it expects to appear (never a fixed sleep).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { waitFor } from '@warren/testkit';
import { resolveSettings, runRepl, type ExitCodeValue, type Io } from '../../src/index';

// eslint-disable-next-line no-control-regex
const escapes = /\u001b\[[0-9;]*[A-Za-z]/g;

export interface ReplDriver {
  /** Everything printed so far, without escape codes. */
  text(): string;
  /** Printed since the last `mark()`. */
  since(): string;
  mark(): void;
  /** Writes keys (`\t` Tab, `\r` Enter, `\u001b[A` up) and waits until the output (since the mark) holds `expect`. */
  type(keys: string, expect?: string | RegExp): Promise<string>;
  /** Ends the input (Ctrl-D) and resolves with the REPL's exit code. */
  end(): Promise<ExitCodeValue>;
}

/** A REPL over the gateway or RabbitMQ (`flags` as the global options), in terminal mode, with `historyFile`. */
export function driveRepl(flags: Record<string, string>, env: Record<string, string>, historyFile: string | undefined): ReplDriver {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  let all = '';
  let markAt = 0;
  stdout.on('data', (c: Buffer) => (all += c.toString('utf8')));
  const io: Io = { stdin, stdout, stderr: stdout, env };
  const done = runRepl(io, resolveSettings(io, flags), { terminal: true, historyFile });
  const clean = (): string => all.replace(escapes, '').replace(/\r/g, '');
  const since = (): string => clean().slice(markAt);
  return {
    text: clean,
    since,
    mark: () => void (markAt = clean().length),
    async type(keys, expect) {
      stdin.write(keys);
      if (expect !== undefined) await waitFor(() => (typeof expect === 'string' ? since().includes(expect) : expect.test(since())), { timeoutMs: 15_000, message: `REPL output to show ${String(expect)}; it shows:\n${since()}` });
      return since();
    },
    end() {
      stdin.end();
      return done;
    },
  };
}

/** A temporary directory for history files, removed by the returned function. */
export function tempDir(): { readonly dir: string; remove(): void } {
  const dir = mkdtempSync(path.join(tmpdir(), 'warren-repl-'));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
