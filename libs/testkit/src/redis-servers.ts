import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { waitFor } from './wait';

const run = promisify(execFile);
const HOST = '127.0.0.1';

/** A TCP port free on 127.0.0.1 now, below `max` (Redis Cluster also listens on port + 10000). */
export async function freePort(max = 55_000): Promise<number> {
  for (let tries = 0; tries < 50; tries++) {
    const port = await new Promise<number>((resolve, reject) => {
      const server = createServer();
      server.once('error', reject);
      server.listen(0, HOST, () => {
        const address = server.address();
        server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
      });
    });
    if (port > 0 && port < max) return port;
  }
  throw new Error(`no free port below ${max}`);
}

/** Runs redis-cli against one port; resolves with its output. */
export async function redisCli(port: number, ...args: string[]): Promise<string> {
  const { stdout } = await run('redis-cli', ['-h', HOST, '-p', String(port), ...args], { timeout: 15_000 });
  return stdout.trim();
}

/** Where a spawned server listens, for ioredis' `cluster` or `sentinels` options. */
export interface RedisNode {
  readonly host: string;
  readonly port: number;
}

/**
 * Redis servers a test starts for itself (a Redis Cluster, or a master with a
 * replica watched by Sentinel), each a `redis-server` child process keeping
 * nothing on disk but its config, in a temporary directory. `stop()` kills
 * them all and removes the directory. Needs `redis-server` and `redis-cli`
 * on the PATH (Debian's redis-server package has both).
 */
export class RedisServers {
  private readonly children = new Map<number, ChildProcess>();
  private stopping: Promise<void> | undefined;

  private constructor(private readonly dir: string) {}

  /** Whether this machine can start servers (redis-server on the PATH); synchronous, for choosing `it` or `it.skip`. */
  static available(): boolean {
    const probe = spawnSync('redis-server', ['--version'], { timeout: 5000, stdio: 'ignore' });
    return probe.error === undefined && probe.status === 0;
  }

  /** A Redis Cluster of `masters` nodes, no replicas, every slot assigned, state ok on every node. */
  static async cluster(masters = 3): Promise<{ servers: RedisServers; nodes: RedisNode[] }> {
    const servers = await RedisServers.create();
    try {
      const ports: number[] = [];
      for (let i = 0; i < masters; i++) {
        const port = await freePort();
        ports.push(port);
        await servers.start(port, ['--cluster-enabled', 'yes', '--cluster-config-file', `nodes-${port}.conf`, '--cluster-node-timeout', '2000']);
      }
      await run('redis-cli', ['--cluster', 'create', ...ports.map((p) => `${HOST}:${p}`), '--cluster-replicas', '0', '--cluster-yes'], { timeout: 30_000 });
      await waitFor(async () => {
        const infos = await Promise.all(ports.map((p) => redisCli(p, 'cluster', 'info')));
        return infos.every((info) => info.includes('cluster_state:ok'));
      }, { timeoutMs: 20_000, intervalMs: 100, message: 'cluster state ok on every node' });
      return { servers, nodes: ports.map((port) => ({ host: HOST, port })) };
    } catch (err) {
      await servers.stop();
      throw err;
    }
  }

  /** A master, one replica and one Sentinel watching them as `name` (quorum 1, down after 1 s). */
  static async sentinel(name = 'warren'): Promise<{ servers: RedisServers; master: RedisNode; replica: RedisNode; sentinels: RedisNode[]; name: string }> {
    const servers = await RedisServers.create();
    try {
      const master = await freePort();
      await servers.start(master, []);
      const replica = await freePort();
      await servers.start(replica, ['--replicaof', HOST, String(master)]);
      await waitFor(async () => (await redisCli(replica, 'info', 'replication')).includes('master_link_status:up'), { timeoutMs: 15_000, intervalMs: 100, message: 'replica in sync' });
      const sentinel = await freePort();
      const config = join(servers.dir, `sentinel-${sentinel}.conf`);
      await writeFile(config, [
        `port ${sentinel}`,
        `bind ${HOST}`,
        `dir ${servers.dir}`,
        `sentinel monitor ${name} ${HOST} ${master} 1`,
        `sentinel down-after-milliseconds ${name} 1000`,
        `sentinel failover-timeout ${name} 5000`,
        '',
      ].join('\n'));
      servers.spawn(sentinel, [config, '--sentinel']);
      await waitFor(async () => (await redisCli(sentinel, 'sentinel', 'replicas', name).catch(() => '')).includes(String(replica)), { timeoutMs: 15_000, intervalMs: 100, message: 'sentinel sees the replica' });
      return { servers, master: { host: HOST, port: master }, replica: { host: HOST, port: replica }, sentinels: [{ host: HOST, port: sentinel }], name };
    } catch (err) {
      await servers.stop();
      throw err;
    }
  }

  private static async create(): Promise<RedisServers> {
    return new RedisServers(await mkdtemp(join(tmpdir(), 'warren-redis-')));
  }

  /** Kills one server with SIGKILL (a crash: no shutdown, no failover handshake); resolves once it has exited. */
  async kill(port: number): Promise<void> {
    const child = this.children.get(port);
    if (!child) throw new Error(`no server on port ${port}`);
    this.children.delete(port);
    await this.end(child);
  }

  /** Kills every server and removes their directory. Idempotent. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      const all = [...this.children.values()];
      this.children.clear();
      process.off('exit', this.killAll);
      await Promise.all(all.map((child) => this.end(child)));
      await rm(this.dir, { recursive: true, force: true });
    })();
    return this.stopping;
  }

  private async start(port: number, extra: readonly string[]): Promise<void> {
    this.spawn(port, ['--port', String(port), '--bind', HOST, '--dir', this.dir, '--save', '', '--appendonly', 'no', ...extra]);
    await waitFor(async () => (await redisCli(port, 'ping').catch(() => '')) === 'PONG', { timeoutMs: 10_000, intervalMs: 50, message: `redis-server on port ${port}` });
  }

  private spawn(port: number, args: readonly string[]): void {
    const child = spawn('redis-server', args, { stdio: 'ignore' });
    child.on('error', () => undefined);
    this.children.set(port, child);
    // A test process that dies without its teardown must not leave servers behind.
    if (this.children.size === 1) process.once('exit', this.killAll);
  }

  private readonly killAll = (): void => {
    for (const child of this.children.values()) child.kill('SIGKILL');
  };

  private async end(child: ChildProcess): Promise<void> {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGKILL');
    await exited;
  }
}
