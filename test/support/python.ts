import { spawnSync } from 'node:child_process';

/** Debian's python3 has python3-pika (installed by .ci/run); a pyenv python3 first on PATH may not. `$PYTHON` wins. */
export function pythonWithPika(): string {
  for (const candidate of [process.env['PYTHON'], '/usr/bin/python3', 'python3'].filter((c): c is string => !!c)) {
    if (spawnSync(candidate, ['-c', 'import pika'], { stdio: 'ignore' }).status === 0) return candidate;
  }
  throw new Error('no python3 with pika: install python3-pika (.ci/run does)');
}
