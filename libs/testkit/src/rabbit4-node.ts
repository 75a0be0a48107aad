import { spawn } from 'node:child_process';
import { chmodSync, chownSync, closeSync, copyFileSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { ensureRoot, mountSystem, processesIn, rootComplete, run, unmountUnder, userIn, type ChrootSpec } from './chroot-root';
import { waitFor } from './wait';

const HOST = '127.0.0.1';
/** Inside the root: the node's data and logs (wiped at every fresh start), and its config files. */
const STATE = '/var/lib/warren-rmq4';
const ETC = '/etc/warren-rmq4';
/** Inside the root: Debian's real scripts (the /usr/sbin wrappers `su` through a shell). */
const SERVER = '/usr/lib/rabbitmq/bin/rabbitmq-server';
const CTL = '/usr/lib/rabbitmq/bin/rabbitmqctl';
const RABBIT_HOME = '/var/lib/rabbitmq';
/** The machine's cookie: copied into the root so the machine's CLI tools may talk to the node as well. */
const MACHINE_COOKIE = '/var/lib/rabbitmq/.erlang.cookie';
const PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/**
 * What RabbitMQ 4.3 denies by default, denied here too (4.0.5 permits them
 * by default but knows each key): a queue both non-durable and non-exclusive
 * (541 at declare), global QoS, and `x-queue-master-locator`. 4.0 has no
 * deprecated feature for `x-queue-mode` (it ignores the argument).
 */
export const RABBITMQ_43_DENIALS = ['transient_nonexcl_queues', 'global_qos', 'queue_master_locator'] as const;

export interface Rabbit4NodeOptions {
  /** Where the debootstrap'd Debian 13 root is cached between runs. @default '/var/cache/warren/rmq4-trixie' */
  readonly cacheDir?: string;
  /** Debian mirror for debootstrap. @default 'http://deb.debian.org/debian' */
  readonly mirror?: string;
  /** Erlang node name; it registers with the machine's epmd (4369). @default 'rabbit4@localhost' */
  readonly name?: string;
  /** AMQP port on 127.0.0.1. @default 5690 */
  readonly port?: number;
  /** Erlang distribution port on 127.0.0.1. @default 25690 */
  readonly distPort?: number;
  /** Time allowed for the node to boot. @default 180000 */
  readonly bootTimeoutMs?: number;
  /** Progress lines. @default nothing */
  readonly log?: (line: string) => void;
}

/**
 * Debian 13's RabbitMQ 4.x (4.0.5, Erlang 27) as one extra node on this
 * machine, running in a debootstrap'd root (`chroot`) beside the machine's
 * own RabbitMQ, which it never touches: its own node name, AMQP and
 * distribution ports on loopback, its own config with RabbitMQ 4.3's
 * denials, data and logs inside the root. It outlives the process that
 * started it (so `scripts/rabbitmq4.ts start` and `stop` can be two
 * commands); `start()` is idempotent and `stop()` unmounts what it mounted.
 * Needs root.
 *
 * @example
 * const node = new Rabbit4Node({ log: console.log });
 * await node.start();                 // debootstrap once (cached), boot, wait for AMQP
 * await node.ctl('list_queues');      // rabbitmqctl -n rabbit4@localhost, inside the root
 * await node.stop();
 */
export class Rabbit4Node {
  readonly root: string;
  readonly name: string;
  readonly port: number;
  readonly distPort: number;
  private readonly spec: ChrootSpec;
  private readonly bootTimeoutMs: number;
  private readonly log: (line: string) => void;

  constructor(options: Rabbit4NodeOptions = {}) {
    this.root = options.cacheDir ?? '/var/cache/warren/rmq4-trixie';
    this.name = options.name ?? 'rabbit4@localhost';
    this.port = options.port ?? 5690;
    this.distPort = options.distPort ?? 25690;
    this.bootTimeoutMs = options.bootTimeoutMs ?? 180_000;
    this.log = options.log ?? (() => undefined);
    this.spec = { dir: this.root, suite: 'trixie', include: ['rabbitmq-server'], mirror: options.mirror ?? 'http://deb.debian.org/debian', log: this.log };
  }

  /** Whether the node can be started here: root, and a cached root or debootstrap's prerequisites (apt). */
  static available(): boolean {
    return process.getuid?.() === 0 && (existsSync('/usr/sbin/debootstrap') || existsSync('/usr/bin/apt-get'));
  }

  /** `amqp://guest:guest@127.0.0.1:<port>` (guest may log in from loopback). */
  get url(): string {
    return `amqp://guest:guest@${HOST}:${this.port}`;
  }

  /** Whether the root is cached and complete. */
  cached(): boolean {
    return rootComplete(this.spec);
  }

  /**
   * The command line that runs this node's rabbitmqctl (inside the root, as
   * its rabbitmq user, `-n <name>`), for RABBITMQCTL (split on spaces).
   */
  ctlCommand(): string[] {
    const { uid, gid } = userIn(this.root, 'rabbitmq');
    return ['chroot', `--userspec=${uid}:${gid}`, this.root, '/usr/bin/env', `HOME=${RABBIT_HOME}`, 'LANG=C.UTF-8', `PATH=${PATH}`, CTL, '-n', this.name];
  }

  /** Runs this node's rabbitmqctl with `args`; resolves with stdout. */
  ctl(...args: string[]): Promise<string> {
    const [file = 'chroot', ...pre] = this.ctlCommand();
    return run(file, [...pre, ...args], {}, 120_000);
  }

  /** Whether the node runs and answers AMQP. */
  async running(): Promise<boolean> {
    return this.cached() && processesIn(this.root).length > 0 && (await amqpAnswers(this.port));
  }

  /**
   * Makes the root (cached), mounts /proc and /dev in it, and boots the node
   * from empty data unless it already answers. Resolves with whether it
   * booted it, once the node answers AMQP. A boot that fails leaves nothing
   * running or mounted.
   */
  async start(): Promise<{ booted: boolean }> {
    await ensureRoot(this.spec);
    if (await this.running()) {
      this.log(`${this.name} already answers on ${HOST}:${this.port}`);
      return { booted: false };
    }
    // A node that never came up (or half-stopped) from an earlier run.
    await this.killAll();
    if (await amqpAnswers(this.port)) throw new Error(`${HOST}:${this.port} answers AMQP but no node runs in ${this.root}: the port is someone else's`);
    await mountSystem(this.root);
    try {
      const logFile = this.prepare();
      this.log(`booting ${this.name} (AMQP ${HOST}:${this.port}, dist ${this.distPort}); log ${logFile}`);
      this.spawnServer(logFile);
      await waitFor(async () => {
        if (processesIn(this.root).length === 0) throw new Error(`${this.name} exited during boot:\n${tail(logFile)}`);
        return amqpAnswers(this.port);
      }, { timeoutMs: this.bootTimeoutMs, intervalMs: 500, message: `${this.name} answering AMQP on ${this.port}` });
      this.log(`${this.name} is up`);
      return { booted: true };
    } catch (err) {
      await this.stop().catch(() => undefined);
      throw err;
    }
  }

  /** Stops the node (`rabbitmqctl stop`, then SIGKILL of whatever remains in the root) and unmounts /proc and /dev. Idempotent. */
  async stop(): Promise<void> {
    if (processesIn(this.root).length > 0 && existsSync(join(this.root, 'etc', 'passwd'))) {
      await this.ctl('stop').catch((err: unknown) => this.log(`rabbitmqctl stop: ${String(err)}`));
      await waitFor(() => processesIn(this.root).length === 0, { timeoutMs: 30_000, intervalMs: 200 }).catch(() => undefined);
    }
    await this.killAll();
    await unmountUnder(this.root);
  }

  /** SIGKILLs every process inside the root and waits until they are gone. */
  private async killAll(): Promise<void> {
    const pids = processesIn(this.root);
    if (pids.length === 0) return;
    this.log(`killing ${pids.length} leftover process(es) in ${this.root}`);
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone meanwhile
      }
    }
    await waitFor(() => processesIn(this.root).every((pid) => zombie(pid)), { timeoutMs: 30_000, intervalMs: 100, message: `processes in ${this.root} gone` });
  }

  /** Writes the config files, empties the data directory, puts the machine's cookie in; returns the console log's path outside the root. */
  private prepare(): string {
    const user = userIn(this.root, 'rabbitmq');
    const at = (p: string): string => join(this.root, p);
    rmSync(at(STATE), { recursive: true, force: true });
    for (const dir of [ETC, STATE, `${STATE}/mnesia`, `${STATE}/log`]) {
      mkdirSync(at(dir), { recursive: true });
      chownSync(at(dir), user.uid, user.gid);
    }
    writeFileSync(at(`${ETC}/rabbitmq.conf`), [
      `listeners.tcp.default = ${HOST}:${this.port}`,
      'loopback_users.guest = true',
      ...RABBITMQ_43_DENIALS.map((feature) => `deprecated_features.permit.${feature} = false`),
      '',
    ].join('\n'));
    writeFileSync(at(`${ETC}/enabled_plugins`), '[].\n');
    // Our own env file: nothing from the root's /etc/rabbitmq may name another node or port.
    writeFileSync(at(`${ETC}/rabbitmq-env.conf`), 'export ERL_FLAGS="-kernel inet_dist_use_interface {127,0,0,1}"\n');
    if (existsSync(MACHINE_COOKIE)) {
      const cookie = at(`${RABBIT_HOME}/.erlang.cookie`);
      rmSync(cookie, { force: true });
      copyFileSync(MACHINE_COOKIE, cookie);
      chownSync(cookie, user.uid, user.gid);
      chmodSync(cookie, 0o400);
    }
    const logFile = at(`${STATE}/log/console.log`);
    writeFileSync(logFile, '');
    chownSync(logFile, user.uid, user.gid);
    return logFile;
  }

  /** rabbitmq-server in the root as its rabbitmq user, detached: the node outlives this process. */
  private spawnServer(logFile: string): void {
    const { uid, gid } = userIn(this.root, 'rabbitmq');
    const out = openSync(logFile, 'a');
    try {
      const env: NodeJS.ProcessEnv = {
        PATH,
        HOME: RABBIT_HOME,
        LANG: 'C.UTF-8',
        RABBITMQ_NODENAME: this.name,
        RABBITMQ_NODE_IP_ADDRESS: HOST,
        RABBITMQ_NODE_PORT: String(this.port),
        RABBITMQ_DIST_PORT: String(this.distPort),
        RABBITMQ_CONFIG_FILE: `${ETC}/rabbitmq.conf`,
        RABBITMQ_CONF_ENV_FILE: `${ETC}/rabbitmq-env.conf`,
        RABBITMQ_ENABLED_PLUGINS_FILE: `${ETC}/enabled_plugins`,
        RABBITMQ_MNESIA_BASE: `${STATE}/mnesia`,
        RABBITMQ_MNESIA_DIR: `${STATE}/mnesia/${this.name}`,
        RABBITMQ_LOG_BASE: `${STATE}/log`,
        ERL_EPMD_ADDRESS: HOST,
      };
      const child = spawn('chroot', [`--userspec=${uid}:${gid}`, this.root, SERVER], { cwd: '/', env, detached: true, stdio: ['ignore', out, out] });
      child.on('error', (err) => this.log(`chroot: ${err.message}`));
      child.unref();
    } finally {
      closeSync(out);
    }
  }
}

/** Whether something on 127.0.0.1:`port` answers an AMQP 0-9-1 protocol header with a method frame (connection.start). */
export function amqpAnswers(port: number, timeoutMs = 2000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: HOST, port });
    const done = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write(Buffer.from('AMQP\x00\x00\x09\x01', 'latin1')));
    socket.once('data', (chunk: Buffer) => done(chunk[0] === 1));
  });
}

function zombie(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'Z';
  } catch {
    return true;
  }
}

function tail(file: string): string {
  try {
    return readFileSync(file, 'utf8').split('\n').slice(-20).join('\n');
  } catch {
    return '';
  }
}
