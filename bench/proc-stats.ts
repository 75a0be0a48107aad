/**
 * Process figures read from /proc: the CPU time of the shared infrastructure (RabbitMQ's
 * beam.smp, redis-server), so the bench can say where the machine's cycles went per call,
 * not only the client's and the service's; and a service process's resident memory.
 * Linux only; elsewhere the figures are simply absent.
 */
import { readFileSync, readdirSync } from 'node:fs';

const TICKS_PER_SECOND = 100; // USER_HZ: 100 on every Linux ABI Node.js ships for

/** Pids whose command name (/proc/<pid>/comm) is `comm`. */
function pidsNamed(comm: string): number[] {
  const out: number[] = [];
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return out;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() === comm) out.push(Number(entry));
    } catch {
      // the process ended while we looked
    }
  }
  return out;
}

/** utime + stime of one process in µs, or 0 when it is gone. */
export function processCpuUs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the parenthesised command name, which may itself hold spaces.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    return (ticks * 1e6) / TICKS_PER_SECOND;
  } catch {
    return 0;
  }
}

/** A sampler of the summed CPU time of every process called `comm`, or undefined when there is none. */
export function cpuSampler(comm: string): (() => number) | undefined {
  const pids = pidsNamed(comm);
  if (pids.length === 0) return undefined;
  return () => pids.reduce((sum, pid) => sum + processCpuUs(pid), 0);
}

/** Resident set size of a process in MB, or null when it cannot be read. */
export function processRssMb(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  try {
    const match = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) / 1024 : null;
  } catch {
    return null;
  }
}

/** Read and write system calls a process has made so far (/proc/<pid>/io), or null when unreadable. */
export function processSyscalls(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  try {
    const io = readFileSync(`/proc/${pid}/io`, 'utf8');
    const read = /^syscr:\s+(\d+)/m.exec(io);
    const write = /^syscw:\s+(\d+)/m.exec(io);
    return read && write ? Number(read[1]) + Number(write[1]) : null;
  } catch {
    return null;
  }
}
