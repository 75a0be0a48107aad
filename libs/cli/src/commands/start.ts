// `warren start`: runs the services warren.config.json lists (project-config.ts), in a project of
// one's own, as `npm start` runs them in Warren's repository: one process per instance (INSTANCE_ID
// `<name>-<n>` when more than one), its log lines prefixed with its name, each in a process group of
// its own (a terminal's Ctrl-C reaches only this command) with its stdin a lifeline pipe
// (WARREN_SUPERVISOR=stdin: if this command dies, even by SIGKILL, each child reads end-of-file and
// drains). Ctrl-C or SIGTERM sends exactly one SIGTERM to each child and waits for its drain, bounded
// by childBoundMs; a child that exits by itself stops the others (exit 1), but one an operator drained
// (`warren worker drain`, exit code drainedExitCode) leaves them running. No --watch, no broker, no
// ops ports: those stay with `npm start` in Warren's repository (docs/services.md "Dev loop").
import { spawn, type ChildProcess } from 'node:child_process';
import { drainedExitCode } from '@warren/amqp';
import { once } from 'node:events';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { ExitCode, UsageError, type ExitCodeValue } from '../errors';
import { projectConfigFile, readProjectConfig, type ProjectConfig } from '../project-config';
import type { Session } from '../session';
import { mainArgs } from './main-args';
import { findTarget } from './new-service-target';

/** A child still running this long after its SIGTERM is killed: above a service's own drain bound (SHUTDOWN_TIMEOUT_MS, 15 s). */
const childBoundMs = 20_000;

interface Instance {
  readonly name: string;
  readonly main: string;
  readonly env: Record<string, string>;
}

function instancesOf(config: ProjectConfig): Instance[] {
  return config.services.flatMap((s) =>
    s.instances === 1 ? [{ name: s.name, main: s.main, env: {} }] : Array.from({ length: s.instances }, (_, i) => ({ name: `${s.name}-${i + 1}`, main: s.main, env: { INSTANCE_ID: `${s.name}-${i + 1}` } })),
  );
}

function loadConfig(root: string): ProjectConfig {
  let config: ProjectConfig | undefined;
  try {
    config = readProjectConfig(root);
  } catch (err) {
    throw new UsageError(err instanceof Error ? err.message : String(err));
  }
  if (config === undefined || config.services.length === 0) throw new UsageError(`no services listed in ${path.join(root, projectConfigFile)}: \`warren new service NAME\` adds one`);
  return config;
}

/** `warren start [--root DIR]`: runs warren.config.json's services until Ctrl-C (or one of them exits). */
export async function startCommand(s: Session, flags: { readonly root?: string; readonly cwd: string }, stop: AbortSignal): Promise<ExitCodeValue> {
  const target = findTarget(flags.root ?? flags.cwd);
  if (target === undefined) throw new UsageError(`no Warren workspace nor npm project depending on @warren/amqp at or above ${flags.root ?? flags.cwd}`);
  const instances = instancesOf(loadConfig(target.root));
  const width = Math.max(...instances.map((i) => i.name.length));
  const children = new Map<string, ChildProcess>();
  let failed = false;
  let stopping = false;
  let ended!: () => void;
  const allDone = new Promise<void>((resolve) => (ended = resolve));
  const stopAll = (): void => {
    if (stopping) return;
    stopping = true;
    for (const child of children.values()) child.kill('SIGTERM');
    if (children.size === 0) ended();
    setTimeout(() => {
      for (const child of children.values()) child.kill('SIGKILL');
    }, childBoundMs).unref();
  };
  for (const i of instances) {
    // TypeScript mains through tsx, resolved from the project (as `npx tsx` would); CommonJS ones without its loader thread (main-args.ts).
    const child = spawn(process.execPath, mainArgs(target.root, i.main), { cwd: target.root, env: { ...s.io.env, ...i.env, WARREN_SUPERVISOR: 'stdin' }, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    child.stdin?.on('error', () => undefined);
    children.set(i.name, child);
    const prefix = `${i.name.padEnd(width)} | `;
    createInterface({ input: child.stdout! }).on('line', (line) => s.io.stdout.write(`${prefix}${line}\n`));
    createInterface({ input: child.stderr! }).on('line', (line) => s.io.stderr.write(`${prefix}${line}\n`));
    child.on('error', (err) => s.io.stderr.write(`${prefix}cannot start: ${err.message}\n`));
    void once(child, 'exit').then(([code, signal]) => {
      children.delete(i.name);
      if (!stopping && code === drainedExitCode) {
        // An operator's `warren worker drain`: the others keep running, and it is not restarted.
        s.io.stderr.write(`${prefix}drained by an operator and exited; the others keep running\n`);
        if (children.size === 0) stopAll();
      } else if (!stopping) {
        s.io.stderr.write(`${prefix}exited (${String(signal ?? code)}); stopping everything\n`);
        failed = true;
        stopAll();
      } else if (code !== 0 && code !== drainedExitCode) failed = true;
      if (stopping && children.size === 0) ended();
    });
  }
  s.io.stderr.write(`warren: started ${instances.map((i) => i.name).join(', ')} from ${path.join(target.root, projectConfigFile)}; Ctrl-C stops them\n`);
  if (stop.aborted) stopAll();
  else stop.addEventListener('abort', stopAll, { once: true });
  await allDone;
  stop.removeEventListener('abort', stopAll);
  return failed ? ExitCode.error : ExitCode.ok;
}
