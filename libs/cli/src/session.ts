import { connectClient, type RpcClient } from '@warren/amqp';
import { AmqpConnection } from '@warren/amqp-transport';
import { InflightView, RedisDirectory, trackQueued, type QueuedMarks } from '@warren/inflight';
import { redactUrl } from '@warren/logger';
import { UnreachableError, UsageError } from './errors';
import { colors, type Colors } from './format';
import { GatewayCaller, GatewayView, gatewayIsEmbedded, type Caller, type ViewPort } from './gateway-caller';
import { envGiven } from '@warren/config';

/** Where the CLI reads and writes; `process` in the bin, fakes in tests. */
export interface Io {
  readonly stdout: { write(text: string): unknown; readonly isTTY?: boolean; columns?: number };
  readonly stderr: { write(text: string): unknown; readonly isTTY?: boolean };
  readonly stdin: NodeJS.ReadableStream;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Where relative paths start (`warren new service`). @default the process's working directory, given by main() */
  readonly cwd?: string;
}

/** Settings every command shares: global flags first, then the environment, then defaults (docs/cli.md). */
export interface Settings {
  readonly json: boolean;
  readonly color: boolean;
  readonly namespace: string;
  readonly amqpUrls: readonly string[];
  readonly redisUrl: string;
  readonly keyPrefix: string;
  /** Base URL of the broker's HTTP gateway; undefined when turned off. */
  readonly gateway: string | undefined;
  /** The gateway was named on purpose (flag or WARREN_GATEWAY), not the default. */
  readonly gatewayExplicit: boolean;
  readonly connectTimeoutMs: number;
  /**
   * How calls and the in-flight view are reached: RabbitMQ and Redis (`amqp`), the gateway's
   * POST /rpc (`gateway`), or `auto`: the gateway when no AMQP URL was given and the gateway says
   * it fronts an embedded system, else RabbitMQ.
   */
  readonly via: string;
  /** An AMQP URL was given (flag or AMQP_URL), so `auto` never looks at the gateway. */
  readonly amqpExplicit: boolean;
}

/**
 * One run of a command: its settings, its output, and the connections it
 * opened (lazily, each at most once), all closed by `close()`.
 */
export class Session {
  readonly c: Colors;
  private rpc: Promise<Caller> | undefined;
  private amqp: AmqpConnection | undefined;
  private inflight: Promise<ViewPort> | undefined;
  private queued: QueuedMarks | undefined;
  private route: Promise<'amqp' | 'gateway'> | undefined;
  private methods: RedisDirectory | undefined;

  constructor(
    readonly io: Io,
    readonly settings: Settings,
  ) {
    this.c = colors(settings.color);
  }

  /** Writes a line to stdout. */
  out(text: string): void {
    this.io.stdout.write(`${text}\n`);
  }

  /** Writes a line to stderr (diagnostics, progress). */
  err(text: string): void {
    this.io.stderr.write(`${text}\n`);
  }

  /** Whether this session goes through RabbitMQ or the gateway (decided once, see {@link Settings.via}). */
  via(): Promise<'amqp' | 'gateway'> {
    const { via, gateway, amqpExplicit } = this.settings;
    if (via !== 'amqp' && via !== 'gateway' && via !== 'auto') return Promise.reject(new UsageError(`--via (WARREN_VIA) must be amqp, gateway or auto, got ${JSON.stringify(via)}`));
    this.route ??= via !== 'auto' ? Promise.resolve(via) : gateway === undefined || amqpExplicit ? Promise.resolve('amqp') : gatewayIsEmbedded(gateway, Math.min(1000, this.settings.connectTimeoutMs)).then((embedded) => (embedded ? 'gateway' : 'amqp'));
    return this.route;
  }

  /**
   * A connected caller (one per session): the RPC client over RabbitMQ, or the gateway's POST /rpc
   * (see {@link via}). Fails with exit code 3 when neither answers in time.
   */
  client(options: { readonly persistent?: boolean; readonly defaultTimeoutMs?: number } = {}): Promise<Caller> {
    this.rpc ??= this.via().then((via) => (via === 'gateway' ? this.gatewayCaller() : this.amqpClient(options)));
    return this.rpc;
  }

  private gatewayCaller(): Caller {
    const base = this.settings.gateway;
    if (base === undefined) throw new UnreachableError('the gateway', new Error('--via gateway needs a gateway (--gateway or WARREN_GATEWAY), not "off"'));
    return new GatewayCaller(base, envGiven(this.io.env, 'WARREN_TOKEN'), this.settings.connectTimeoutMs);
  }

  private async amqpClient(options: { readonly persistent?: boolean; readonly defaultTimeoutMs?: number }): Promise<RpcClient> {
    // The session owns the connection (not the client), so availability checks can read queue depths on it.
    const connection = new AmqpConnection({
      urls: [...this.settings.amqpUrls],
      startTimeoutMs: this.settings.connectTimeoutMs,
      socketTimeoutMs: Math.min(5000, this.settings.connectTimeoutMs),
      reconnect: { initialDelayMs: 100, maxDelayMs: 1000 },
      connectionName: 'warren-cli',
    });
    this.amqp = connection;
    const userId = envGiven(this.io.env, 'AMQP_USER_ID');
    // Made before RabbitMQ connects, so Redis is connected by the first call (the queued mark below is skipped while it is not).
    const inflight = this.view();
    try {
      await connection.start();
      const client = await connectClient({
        connection,
        namespace: this.settings.namespace,
        // Run as a RabbitMQ user of its own (docs/security.md): reply queues its permissions allow.
        ...(userId === undefined ? {} : { clientIdPrefix: userId }),
        ...(options.persistent === undefined ? {} : { persistent: options.persistent }),
        ...(options.defaultTimeoutMs === undefined ? {} : { defaultTimeoutMs: options.defaultTimeoutMs }),
      });
      // Its calls read as queued in the in-flight view (the console's In flight) until a worker takes them;
      // skipped at once while Redis does not answer (the mark is best effort).
      const view = await inflight;
      if (view instanceof InflightView) this.queued = trackQueued(client, view);
      return client;
    } catch (err) {
      throw new UnreachableError(`RabbitMQ at ${this.settings.amqpUrls.map(redactUrl).join(', ')}`, err);
    }
  }

  /** The RabbitMQ connection under {@link client}; undefined before it was asked for, and through the gateway. */
  get connection(): AmqpConnection | undefined {
    return this.amqp;
  }

  /**
   * The method directory in Redis (which service serves a method, kept after its instances
   * stopped). A hint: commands asking it go ahead without it when Redis is slow or away.
   */
  directory(): RedisDirectory {
    this.methods ??= new RedisDirectory({ redis: this.settings.redisUrl, keyPrefix: this.settings.keyPrefix, commandTimeoutMs: Math.min(this.settings.connectTimeoutMs, 300) });
    return this.methods;
  }

  /** The cluster-wide in-flight view: in Redis (@warren/inflight), or the gateway's inflight.* methods (see {@link via}). */
  view(): Promise<ViewPort> {
    this.inflight ??= this.via().then(async (via) =>
      via === 'gateway'
        ? new GatewayView(await this.client())
        : new InflightView({ redis: this.settings.redisUrl, keyPrefix: this.settings.keyPrefix, commandTimeoutMs: Math.min(this.settings.connectTimeoutMs, 3000) }),
    );
    return this.inflight;
  }

  get redisLabel(): string {
    return `Redis at ${redactUrl(this.settings.redisUrl)} (key prefix ${this.settings.keyPrefix})`;
  }

  /** Closes whatever the command opened. Idempotent; never throws. */
  async close(): Promise<void> {
    const rpc = this.rpc;
    this.rpc = undefined;
    const connection = this.amqp;
    this.amqp = undefined;
    const view = this.inflight;
    this.inflight = undefined;
    // The marks of this session's calls, and the unmarks of those answered, go out before Redis closes
    // (a process that exits right after its answer would leave a call reading `queued`).
    await this.queued?.flush();
    this.queued = undefined;
    const directory = this.methods;
    this.methods = undefined;
    await Promise.all([
      rpc?.then((c) => c.close()).catch(() => undefined).then(() => connection?.close()).catch(() => undefined),
      view?.then((v) => v.close()).catch(() => undefined),
      directory?.close().catch(() => undefined),
    ]);
  }
}
