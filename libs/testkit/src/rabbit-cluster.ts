import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { accessSync, chownSync, closeSync, constants, mkdirSync, openSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitFor } from './wait';

const HOST = '127.0.0.1';
/** Debian's layout: the real scripts (the /usr/sbin wrappers `su` to the rabbitmq user through a shell). */
const SERVER = '/usr/lib/rabbitmq/bin/rabbitmq-server';
const CTL = '/usr/lib/rabbitmq/bin/rabbitmqctl';
/** The rabbitmq user's home: its .erlang.cookie is the cookie every node and CLI call shares. */
const RABBIT_HOME = '/var/lib/rabbitmq';

/** One extra RabbitMQ node a test started. */
export interface RabbitNode {
  /** Erlang node name, e.g. `warren-c1-ab12@localhost`. */
  readonly name: string;
  /** AMQP port on 127.0.0.1. */
  readonly port: number;
  /** Erlang distribution port on 127.0.0.1. */
  readonly distPort: number;
  /** `amqp://guest:guest@127.0.0.1:<port>` (guest may log in from loopback). */
  readonly url: string;
}

export interface RabbitClusterOptions {
  /** Nodes to start and cluster together. @default 3 */
  readonly size?: number;
  /** Start of every node name; a random suffix keeps parallel runs apart. @default 'warren-c' */
  readonly prefix?: string;
  /** Time allowed for one node to boot (a loaded machine takes tens of seconds). @default 180000 */
  readonly bootTimeoutMs?: number;
}

interface NodeRun {
  readonly node: RabbitNode;
  readonly dir: string;
  readonly env: NodeJS.ProcessEnv;
  child: ChildProcess | undefined;
}

/**
 * A RabbitMQ cluster of extra nodes on this machine, for failover tests: each
 * node is a `rabbitmq-server` child process running as the `rabbitmq` user
 * with its own node name, AMQP and distribution ports, config file (the
 * machine's own config pins its listener to 5672), plugins file, and data and
 * log directories under one temporary directory. They share the machine's
 * Erlang cookie. Nodes 2..n join node 1, one at a time, with `rabbitmqctl stop_app /
 * join_cluster / start_app`. The machine's own node (`rabbit@localhost`) is
 * never touched. `stop()` (and process exit) kills every node and removes the
 * directory. Needs root, the `rabbitmq` user and Debian's rabbitmq-server.
 */
export class RabbitCluster {
  private readonly runs: NodeRun[] = [];
  /** Nodes whose app was stopped with stopApp and not started again. */
  private readonly appStopped = new Set<string>();
  private stopping: Promise<void> | undefined;

  private constructor(private readonly dir: string, private readonly user: { uid: number; gid: number }, private readonly bootTimeoutMs: number) {}

  /** Whether extra nodes can be started here (root, the rabbitmq user, the server scripts); synchronous, for `it` or `it.skip`. */
  static available(): boolean {
    if (process.getuid?.() !== 0 || rabbitUser() === undefined) return false;
    try {
      accessSync(SERVER, constants.X_OK);
      accessSync(CTL, constants.X_OK);
      accessSync(join(RABBIT_HOME, '.erlang.cookie'), constants.R_OK);
      return true;
    } catch {
      return false;
    }
  }

  /** Starts `size` nodes at once, then clusters them; rejects (having removed them) if any step fails. */
  static async start(options: RabbitClusterOptions = {}): Promise<RabbitCluster> {
    const user = rabbitUser();
    if (!user) throw new Error('RabbitCluster needs the rabbitmq user');
    const size = options.size ?? 3;
    const prefix = `${options.prefix ?? 'warren-c'}-${Math.random().toString(36).slice(2, 6)}`;
    const dir = await mkdtemp(join(tmpdir(), 'warren-rabbit-'));
    const cluster = new RabbitCluster(dir, user, options.bootTimeoutMs ?? 180_000);
    try {
      const taken = new Set<number>();
      for (let i = 1; i <= size; i++) cluster.prepare(`${prefix}${i}@localhost`, await listenPort(taken), await listenPort(taken));
      chownTree(dir, user);
      await Promise.all(cluster.runs.map((run) => cluster.boot(run)));
      const [first, ...rest] = cluster.nodes;
      if (!first) throw new Error('RabbitCluster.start: size must be at least 1');
      // One at a time: two nodes joining at once can abort each other's schema copy (mnesia
      // `schema_prepare` aborted, seen in CI).
      for (const node of rest) await cluster.join(node, first);
      await waitFor(async () => (await cluster.runningNodes(first)).length === size, { timeoutMs: 60_000, intervalMs: 500, message: `${size} running nodes in the cluster` });
      return cluster;
    } catch (err) {
      await cluster.stop();
      throw err;
    }
  }

  get nodes(): RabbitNode[] {
    return this.runs.map((r) => r.node);
  }

  /** Every node's URL, `first` first: a client given this list connects to `first` and fails over to the others in order. */
  urls(first?: RabbitNode): string[] {
    const all = this.nodes;
    const i = first ? all.findIndex((n) => n.name === first.name) : 0;
    return [...all.slice(i), ...all.slice(0, i)].map((n) => n.url);
  }

  /**
   * `stop_app / join_cluster / start_app`; a join that fails is retried (twice) after a `reset` of the
   * joining node, which is one of ours and holds nothing yet.
   */
  private async join(node: RabbitNode, first: RabbitNode): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await this.ctl(node, 'stop_app');
        await this.ctl(node, 'join_cluster', first.name);
        await this.startApp(node);
        return;
      } catch (err) {
        if (attempt >= 3) throw err;
        await this.ctl(node, 'stop_app').catch(() => undefined);
        await this.ctl(node, 'reset').catch(() => undefined);
        await new Promise((resolve) => setTimeout(resolve, 1000 * attempt));
      }
    }
  }

  /** Runs `rabbitmqctl -n <node> ...args` as the rabbitmq user; resolves with stdout, rejects with stderr. */
  ctl(node: RabbitNode, ...args: string[]): Promise<string> {
    return new Promise((resolve, reject) => {
      execFile(CTL, ['-n', node.name, ...args], { timeout: 120_000, cwd: RABBIT_HOME, uid: this.user.uid, gid: this.user.gid, env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: RABBIT_HOME, LANG: 'C.UTF-8' } }, (err, stdout, stderr) => {
        if (err) reject(new Error(`rabbitmqctl -n ${node.name} ${args.join(' ')} failed: ${stderr || err.message}`, { cause: err }));
        else resolve(stdout);
      });
    });
  }

  /** Process ids of the nodes' Erlang VMs (for their CPU time). */
  vmPids(): number[] {
    return this.runs.flatMap((r) => beamPids(r.child?.pid));
  }

  /** Node names `node` sees running in its cluster. */
  async runningNodes(node: RabbitNode): Promise<string[]> {
    const status = JSON.parse(await this.ctl(node, 'cluster_status', '--formatter', 'json')) as { running_nodes?: string[] };
    return status.running_nodes ?? [];
  }

  /** `rabbitmqctl stop_app`: the node's Erlang VM stays up, its listeners and queue replicas go (a clean node loss). */
  async stopApp(node: RabbitNode): Promise<void> {
    this.appStopped.add(node.name);
    await this.ctl(node, 'stop_app');
  }

  /** `rabbitmqctl start_app`, then waits until the node takes AMQP connections again. */
  async startApp(node: RabbitNode): Promise<void> {
    await this.ctl(node, 'start_app');
    this.appStopped.delete(node.name);
    await this.awaitPort(node);
  }

  /** Nodes killed or stopped (and not yet back). */
  down(): RabbitNode[] {
    return this.runs.filter((r) => !r.child || this.appStopped.has(r.node.name)).map((r) => r.node);
  }

  /**
   * Brings every node that is down back (killed ones booted, stopped ones
   * started), so the cluster has its majority again: a teardown that closes
   * consumers of quorum queues needs it after a test that failed midway.
   */
  async heal(): Promise<void> {
    await Promise.all(this.down().map((node) => (this.run(node).child ? this.startApp(node) : this.restart(node))));
  }

  /** Kills the node's Erlang VM with SIGKILL (a crash: no goodbye to its peers or clients); resolves once it is gone. */
  async kill(node: RabbitNode): Promise<void> {
    const run = this.run(node);
    const child = run.child;
    run.child = undefined;
    if (!child) return;
    const vms = beamPids(child.pid);
    for (const pid of vms) signal(pid, 'SIGKILL');
    await exitOf(child, 'SIGKILL');
    // The script exits at once, while the kernel may still be tearing down a large VM (its listener open):
    // the node is gone when its VM is and its port no longer answers.
    await waitFor(async () => vms.every((pid) => !alive(pid)) && !(await portOpen(node.port)), { timeoutMs: 30_000, intervalMs: 20, message: `${node.name} gone` });
  }

  /** Starts a killed node again from its data directory; it rejoins its cluster by itself. */
  async restart(node: RabbitNode): Promise<void> {
    const run = this.run(node);
    if (run.child) throw new Error(`${node.name} is running`);
    await this.boot(run);
  }

  /** Kills every node and removes their directories. Idempotent. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      process.off('exit', this.killAll);
      await Promise.all(this.runs.map((run) => this.kill(run.node)));
      rmSync(this.dir, { recursive: true, force: true });
    })();
    return this.stopping;
  }

  private prepare(name: string, port: number, distPort: number): void {
    const dir = join(this.dir, name.split('@')[0] as string);
    for (const sub of ['mnesia', 'log']) mkdirSync(join(dir, sub), { recursive: true });
    // The default listener (5672 in the machine's config) replaced by this node's own port, on loopback only.
    writeFileSync(join(dir, 'rabbitmq.conf'), `listeners.tcp.default = ${HOST}:${port}\nloopback_users.guest = true\n`);
    writeFileSync(join(dir, 'enabled_plugins'), '[].\n');
    // Our own env file instead of /etc/rabbitmq/rabbitmq-env.conf, which names the machine's node.
    writeFileSync(join(dir, 'rabbitmq-env.conf'), 'export ERL_FLAGS="-kernel inet_dist_use_interface {127,0,0,1}"\n');
    const env: NodeJS.ProcessEnv = {
      PATH: process.env['PATH'] ?? '/usr/bin:/bin',
      HOME: RABBIT_HOME,
      LANG: 'C.UTF-8',
      RABBITMQ_NODENAME: name,
      RABBITMQ_NODE_IP_ADDRESS: HOST,
      RABBITMQ_NODE_PORT: String(port),
      RABBITMQ_DIST_PORT: String(distPort),
      RABBITMQ_CONFIG_FILE: join(dir, 'rabbitmq.conf'),
      RABBITMQ_CONF_ENV_FILE: join(dir, 'rabbitmq-env.conf'),
      RABBITMQ_ENABLED_PLUGINS_FILE: join(dir, 'enabled_plugins'),
      RABBITMQ_MNESIA_BASE: join(dir, 'mnesia'),
      RABBITMQ_MNESIA_DIR: join(dir, 'mnesia', name),
      RABBITMQ_LOG_BASE: join(dir, 'log'),
      ERL_EPMD_ADDRESS: HOST,
    };
    this.runs.push({ node: { name, port, distPort, url: `amqp://guest:guest@${HOST}:${port}` }, dir, env, child: undefined });
  }

  private async boot(run: NodeRun): Promise<void> {
    const out = openSync(join(run.dir, 'log', 'console.log'), 'a');
    try {
      const child = spawn(SERVER, [], { cwd: RABBIT_HOME, env: run.env, uid: this.user.uid, gid: this.user.gid, stdio: ['ignore', out, out] });
      child.on('error', () => undefined);
      run.child = child;
      // A test process that dies without its teardown must not leave nodes behind.
      process.off('exit', this.killAll);
      process.once('exit', this.killAll);
      const died = exitOf(child).then(() => {
        throw new Error(`${run.node.name} exited during boot; see ${join(run.dir, 'log')}`);
      });
      await Promise.race([this.awaitPort(run.node), died]);
      died.catch(() => undefined);
      // Someone else's listener on the port would look like ours: the node must still be alive.
      if (child.exitCode !== null || child.signalCode !== null) throw new Error(`${run.node.name} exited during boot; see ${join(run.dir, 'log')}`);
    } finally {
      closeSync(out);
    }
  }

  private awaitPort(node: RabbitNode): Promise<void> {
    return waitFor(() => portOpen(node.port), { timeoutMs: this.bootTimeoutMs, intervalMs: 250, message: `${node.name} listening on ${node.port}` });
  }

  private run(node: RabbitNode): NodeRun {
    const run = this.runs.find((r) => r.node.name === node.name);
    if (!run) throw new Error(`${node.name} is not a node of this cluster`);
    return run;
  }

  private readonly killAll = (): void => {
    for (const run of this.runs) {
      if (!run.child) continue;
      for (const pid of beamPids(run.child.pid)) signal(pid, 'SIGKILL');
      run.child.kill('SIGKILL');
    }
    rmSync(this.dir, { recursive: true, force: true });
  };
}

/**
 * A port free for listening, below the kernel's ephemeral range (32768 and up
 * on Linux): the machine's other processes take ephemeral ports for their
 * outgoing connections all the time, and a node boots for long enough that a
 * port free at the start may not be free when its listener opens. Never the
 * machine's own node's ports (5672, 25672), never one in `taken`.
 */
async function listenPort(taken: Set<number>): Promise<number> {
  for (let tries = 0; tries < 200; tries++) {
    const port = 21_000 + Math.floor(Math.random() * 11_000);
    if (taken.has(port) || port === 25_672) continue;
    const free = await new Promise<boolean>((resolve) => {
      const server = createServer();
      server.once('error', () => resolve(false));
      server.listen(port, HOST, () => server.close(() => resolve(true)));
    });
    if (free) {
      taken.add(port);
      return port;
    }
  }
  throw new Error('no free port between 21000 and 32000');
}

function rabbitUser(): { uid: number; gid: number } | undefined {
  try {
    const line = readFileSync('/etc/passwd', 'utf8').split('\n').find((l) => l.startsWith('rabbitmq:'));
    const [, , uid, gid] = line?.split(':') ?? [];
    return uid && gid ? { uid: Number(uid), gid: Number(gid) } : undefined;
  } catch {
    return undefined;
  }
}

function chownTree(path: string, user: { uid: number; gid: number }): void {
  chownSync(path, user.uid, user.gid);
  for (const entry of readdirSync(path, { withFileTypes: true })) {
    const p = join(path, entry.name);
    if (entry.isDirectory()) chownTree(p, user);
    else chownSync(p, user.uid, user.gid);
  }
}

/**
 * The Erlang VM under a rabbitmq-server script (the script runs it in the
 * background and waits, to turn signals into a clean stop): the process
 * whose parent is the script and whose command is beam.smp. Found in /proc.
 */
function beamPids(scriptPid: number | undefined): number[] {
  if (scriptPid === undefined) return [];
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === scriptPid && comm.startsWith('beam')) pids.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

/** Whether a process exists and is not a zombie (state Z: dead, waiting to be reaped). */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // already gone
  }
}

/** Resolves when `child` has exited; with `sig`, sends it that signal too (once the VM is gone the script exits by itself). */
function exitOf(child: ChildProcess, sig?: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  if (sig) child.kill(sig);
  return exited;
}

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: HOST, port });
    socket.setTimeout(1000);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });
}
