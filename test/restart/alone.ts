// The restart stage takes the machine's RabbitMQ down: its tests check first that nothing else is
// testing against it, and that rabbitmqctl is there.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { hasRabbitmqctl } from '../integration/faults/rabbitmqctl';

/** Our own process and its ancestors (npm, sh, jest): /proc/<pid>/stat field 4 is the parent. */
function lineage(): Set<number> {
  const pids = new Set<number>();
  for (let pid = process.pid; pid > 1 && !pids.has(pid);) {
    pids.add(pid);
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      pid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    } catch {
      break;
    }
  }
  return pids;
}

/** Other jest runs on this machine: restarting the broker under them would fail their tests. */
function otherJestRuns(): string[] {
  let out: string;
  try {
    out = execFileSync('pgrep', ['-af', 'jest'], { encoding: 'utf8' });
  } catch {
    return []; // pgrep exits 1 when nothing matches
  }
  const mine = lineage();
  return out.split('\n').filter((line) => line.trim() !== '' && !mine.has(Number(line.trim().split(/\s+/)[0])));
}

/** Throws unless this jest run is alone on the machine (WARREN_RESTART_FORCE=1 overrides) and rabbitmqctl can be run. */
export function assertRestartAlone(): void {
  if (process.env['WARREN_RESTART_FORCE'] !== '1') {
    const others = otherJestRuns();
    if (others.length > 0) throw new Error(`another jest run is in progress; the restart stage takes RabbitMQ down and must run alone (WARREN_RESTART_FORCE=1 overrides):\n${others.join('\n')}`);
  }
  if (!hasRabbitmqctl()) throw new Error('the restart stage needs rabbitmqctl (on the PATH, or RABBITMQCTL="docker exec <container> rabbitmqctl")');
}
