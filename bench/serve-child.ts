/**
 * The service side of the bench's child protocol, for the plain-amqplib services
 * (amqp-baseline-server.ts, amqp-guarded-server.ts): prints `ready`, answers each `cpu` line on
 * stdin with `cpu <userUs+systemUs>` (cumulative process.cpuUsage()), and runs `shutdown` once, on
 * SIGTERM, SIGINT or the end of stdin (the parent went away). A failed shutdown sets exit code 1.
 */
import { createInterface } from 'node:readline';

export function serveChild(label: string, shutdown: () => Promise<void>): void {
  const stdin = createInterface({ input: process.stdin });
  stdin.on('line', (line) => {
    if (line.trim() !== 'cpu') return;
    const u = process.cpuUsage();
    process.stdout.write(`cpu ${u.user + u.system}\n`);
  });
  let stopping = false;
  const stop = async (): Promise<void> => {
    if (stopping) return;
    stopping = true;
    stdin.close();
    try {
      await shutdown();
    } catch (err) {
      console.error(`[${label}] shutdown error:`, err instanceof Error ? err.message : err);
      process.exitCode = 1;
    }
  };
  process.once('SIGTERM', () => void stop());
  process.once('SIGINT', () => void stop());
  stdin.once('close', () => void stop()); // parent went away (or stop already closed it)
  process.stdout.write('ready\n');
}
