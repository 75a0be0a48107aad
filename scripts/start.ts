// `npm start`: the broker and the example services together, as separate
// processes the way they run in production, with their logs interleaved.
//
// RabbitMQ and Redis come from AMQP_URL / REDIS_URL, the default local ports,
// or testcontainers when Docker is reachable (scripts/ensure-services.ts).
// Ctrl-C (SIGINT) or SIGTERM stops every process gracefully.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { defaults, ensureServices } from './ensure-services';

const root = path.resolve(__dirname, '..');

/** What runs, and how many of each. Every process gets the same environment. */
const processes: readonly { name: string; file: string; env?: Record<string, string> }[] = [
  { name: 'broker', file: 'broker/src/main.ts' },
  { name: 'calculator-1', file: 'services/calculator/src/main.ts', env: { INSTANCE_ID: 'calculator-1' } },
  { name: 'calculator-2', file: 'services/calculator/src/main.ts', env: { INSTANCE_ID: 'calculator-2' } },
  { name: 'audit', file: 'services/audit/src/main.ts' },
  { name: 'jobs-1', file: 'services/jobs/src/main.ts', env: { INSTANCE_ID: 'jobs-1' } },
  { name: 'jobs-2', file: 'services/jobs/src/main.ts', env: { INSTANCE_ID: 'jobs-2' } },
];

const children = new Map<string, ChildProcess>();
let stopping = false;

function start(name: string, file: string, env: Record<string, string> = {}): void {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(root, file)], { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.set(name, child);
  const prefix = `${name.padEnd(12)} | `;
  createInterface({ input: child.stdout }).on('line', (line) => process.stdout.write(prefix + line + '\n'));
  createInterface({ input: child.stderr }).on('line', (line) => process.stderr.write(prefix + line + '\n'));
  child.on('exit', (code, signal) => {
    children.delete(name);
    if (!stopping) {
      process.stderr.write(`${prefix}exited (${signal ?? code}); stopping everything\n`);
      void stop(1);
    } else if (children.size === 0) process.exit(exitCode);
  });
}

let exitCode = 0;
async function stop(code: number): Promise<void> {
  if (stopping) return;
  stopping = true;
  exitCode = code;
  for (const child of children.values()) child.kill('SIGTERM');
  if (children.size === 0) process.exit(exitCode);
  // Each process drains its own work; this only bounds a process that hangs.
  setTimeout(() => {
    for (const child of children.values()) child.kill('SIGKILL');
    process.exit(1);
  }, 20_000).unref();
}

async function main(): Promise<void> {
  const provided = await ensureServices();
  // Every process gets both URLs explicitly: services track calls in Redis only when REDIS_URL is set.
  process.env['AMQP_URL'] ||= defaults.amqpUrl;
  process.env['REDIS_URL'] ||= defaults.redisUrl;
  process.stdout.write(`warren: RabbitMQ ${provided.rabbitmq}, Redis ${provided.redis}\n`);
  for (const p of processes) start(p.name, p.file, p.env);
  process.on('SIGINT', () => void stop(0));
  process.on('SIGTERM', () => void stop(0));
}

main().catch((err: unknown) => {
  process.stderr.write(`warren: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
