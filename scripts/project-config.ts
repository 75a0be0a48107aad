// `npm start` runs the project's own services beside the example ones: those listed in
// warren.config.json at the repository root (its shape and checks: @warren/cli's
// project-config.ts, the file `warren new service` writes). Each becomes one process per instance,
// supervised, watched and restarted like the built-in ones.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { readProjectConfig } from '@warren/cli';

/** A process `npm start` runs: its label, its main relative to the root, its extra environment. */
export interface StartProcess {
  readonly name: string;
  readonly file: string;
  readonly env?: Record<string, string>;
}

/**
 * The processes of warren.config.json's services at `root` (none without the file): `<name>` for
 * one instance, `<name>-1` ... `<name>-n` (each its INSTANCE_ID) for more. Throws naming the
 * file when it is wrong, a main that does not exist, or a label the built-in processes use.
 *
 * @example projectProcesses(root, builtIn) // [{ name: 'billing-1', file: 'services/billing/src/main.ts', env: { INSTANCE_ID: 'billing-1' } }, ...]
 */
export function projectProcesses(root: string, builtIn: readonly StartProcess[]): StartProcess[] {
  const config = readProjectConfig(root);
  if (config === undefined) return [];
  const taken = new Set(builtIn.map((p) => p.name));
  const out: StartProcess[] = [];
  for (const s of config.services) {
    if (!existsSync(path.join(root, s.main))) throw new Error(`warren.config.json: ${s.name}'s main ${s.main} does not exist`);
    const names = s.instances === 1 ? [s.name] : Array.from({ length: s.instances }, (_, i) => `${s.name}-${i + 1}`);
    for (const name of names) {
      if (taken.has(name)) throw new Error(`warren.config.json: ${name} is a process npm start runs already; choose another service name`);
      taken.add(name);
      out.push({ name, file: s.main, ...(s.instances === 1 ? {} : { env: { INSTANCE_ID: name } }) });
    }
  }
  return out;
}
