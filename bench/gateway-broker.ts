/**
 * The broker as users run it, for the gateway bench: `node broker/dist/main.js` (the `warren-broker`
 * command's code) in a process of its own, configured only by its environment: auth on with one client
 * token (GATEWAY_TOKENS, sent as `Authorization: Bearer`), Redis for queued marks and the in-flight view,
 * the bench's namespace and key prefix, every other setting at its default.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join, resolve } from 'node:path';
import { createServer } from 'node:net';
import { childEntry } from './children';
import { profileArgs } from './profile';
import { amqpUrl } from '@warren/testkit';

export interface BrokerChild {
  readonly pid: number;
  /** e.g. `http://127.0.0.1:40123` */
  readonly url: string;
  stop(): Promise<void>;
}

/** A port nobody listens on now (the broker binds it a moment later). */
async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  server.close();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

/**
 * Starts the broker on `namespace` and resolves once it is ready (its `/readyz` answers 200: the first
 * discovery round is over, so the bench service is in its catalogue). `redis: false` leaves REDIS_URL out;
 * `tree`: the checkout whose broker runs (its built broker/dist; a before/after inside one run). `BENCH_BROKER_NODE_ARGS` passes
 * `node` flags to it alone; with `BENCH_PROF`, it writes its CPU profile like the bench's services (profile.ts).
 */
export async function spawnBroker(namespace: string, token: string, opts: { readonly redis: boolean; readonly tree?: string; readonly floor?: boolean }, readyTimeoutMs = 30_000): Promise<BrokerChild> {
  const port = await freePort();
  const root = opts.tree === undefined ? resolve(__dirname, '..') : resolve(opts.tree);
  // `floor`: gateway-floor.ts, the least a Node gateway on Warren's client costs, in the broker's place.
  const entry = opts.floor === true ? childEntry('gateway-floor')
    : process.env['BENCH_SOURCE'] === '1' ? ['--import', 'tsx', join(root, 'broker', 'src', 'main.ts')] : [join(root, 'broker', 'dist', 'main.js')];
  const extra = (process.env['BENCH_BROKER_NODE_ARGS'] ?? '').split(/\s+/).filter((a) => a !== '');
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    AMQP_URL: amqpUrl(),
    REDIS_URL: process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379',
    WARREN_NAMESPACE: namespace,
    WARREN_KEY_PREFIX: namespace,
    GATEWAY_HOST: '127.0.0.1',
    GATEWAY_PORT: String(port),
    GATEWAY_TOKENS: token,
    // One broker per bench run: its scheduler would only race itself for the lease.
    SCHEDULER: 'off',
  };
  delete env['GATEWAY_AUTH'];
  // Without Redis: no queued marks, no in-flight view (to see what they cost; not how users run it).
  if (!opts.redis) delete env['REDIS_URL'];
  const child = spawn(process.execPath, [...profileArgs('service'), ...extra, ...entry], { cwd: root, env, stdio: ['ignore', 'ignore', 'inherit'] });
  const exited = once(child, 'exit');
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const killer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    await exited;
    clearTimeout(killer);
  };
  const url = `http://127.0.0.1:${port}`;
  const until = Date.now() + readyTimeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`broker exited before ready (code ${String(child.exitCode)})`);
    const ready = await fetch(`${url}/readyz`).then((r) => r.ok, () => false);
    if (ready) break;
    if (Date.now() > until) {
      await stop();
      throw new Error('broker not ready in time');
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  if (child.pid === undefined) throw new Error('broker has no pid');
  return { pid: child.pid, url, stop };
}
