// Helpers for the integration tests of the example services and the CLI:
// run a service's real main.ts as a child process, run the `warren` bin, and
// clean up Redis keys. Each test file still brings its own TestNamespace.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { Redis } from 'ioredis';
import { amqpUrl, redisUrl, spawnTs, type Teardown, type TsChild } from '@warren/testkit';

export const repoRoot = path.resolve(__dirname, '..', '..');

export type ExampleService = 'calculator' | 'audit' | 'jobs';

/**
 * Starts `services/<name>/src/main.ts` in its own process (as docker-compose
 * or a person would), with AMQP_URL/REDIS_URL of the test machine and `env`
 * over them, and waits for its "service ready" log line. SIGKILLed at teardown
 * if still running.
 */
export async function startServiceProcess(td: Teardown, name: ExampleService, env: Record<string, string>): Promise<TsChild> {
  const child = spawnTs(path.join(repoRoot, 'services', name, 'src', 'main.ts'), [], { AMQP_URL: amqpUrl(), REDIS_URL: redisUrl(), LOG_LEVEL: 'info', ...env });
  td.add(() => child.kill('SIGKILL'));
  await child.waitForLine(/"msg":"service ready"/, 30_000);
  return child;
}

/** Resolves with the first stdout line of `child` (after its last match) that is a JSON log line with this `msg` and fields. */
export async function waitForLog(child: TsChild, msg: string, fields: Record<string, unknown> = {}, timeoutMs = 15_000): Promise<Record<string, unknown>> {
  const line = await child.waitForLine((l) => {
    try {
      const entry = JSON.parse(l) as Record<string, unknown>;
      return entry['msg'] === msg && Object.entries(fields).every(([k, v]) => entry[k] === v);
    } catch {
      return false;
    }
  }, timeoutMs);
  return JSON.parse(line) as Record<string, unknown>;
}

export interface CliRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs `node libs/cli/bin/warren.js ...args` as a child process (how
 * `npx warren` runs it), with `env` over the test's environment, optional
 * stdin, and a hard timeout.
 */
export function runCli(args: readonly string[], opts: { env: Record<string, string>; input?: string; timeoutMs?: number }): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(repoRoot, 'libs', 'cli', 'bin', 'warren.js'), ...args], {
      cwd: repoRoot,
      env: { ...process.env, FORCE_COLOR: '', NO_COLOR: '1', ...opts.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`warren ${args.join(' ')} did not finish in ${opts.timeoutMs ?? 20_000} ms; stdout: ${stdout}; stderr: ${stderr}`));
    }, opts.timeoutMs ?? 20_000);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(opts.input ?? '');
  });
}

/** Deletes every Redis key starting with `prefix` (the keys a test made under its unique prefix). */
export async function deleteRedisKeys(prefix: string, url: string = redisUrl()): Promise<void> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
      cursor = next;
      if (keys.length > 0) await redis.del(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}
