import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { FaultPair, type FaultSettings } from './fault-pair';

/** Where a {@link FaultProxy} forwards to (RabbitMQ, Redis, ...). */
export interface FaultProxyTarget {
  host: string;
  port: number;
}

/** Options for {@link FaultProxy.start}. */
export interface FaultProxyOptions {
  target: FaultProxyTarget;
  /** Port to listen on, on 127.0.0.1; default 0 (ephemeral). */
  listenPort?: number;
}

const LISTEN_HOST = '127.0.0.1';

const defaultPorts: Readonly<Record<string, number>> = { 'amqp:': 5672, 'amqps:': 5671, 'redis:': 6379, 'rediss:': 6379 };

/**
 * A TCP proxy for fault-injection tests: put it between a client and
 * RabbitMQ or Redis (`proxy.url(amqpUrl())`), then cut, stall, slow down or
 * refuse the connections to prove the client's reconnect, timeout and
 * redelivery paths against the real servers. Socket errors never throw; every
 * socket and timer is released by `close()`.
 */
export class FaultProxy {
  private readonly settings: FaultSettings = { stalled: false, latencyMs: 0 };
  private readonly pairs = new Set<FaultPair>();
  private refusing = false;
  private accepted = 0;
  private refused = 0;
  private closing: Promise<void> | undefined;

  private constructor(
    private readonly server: Server,
    private readonly target: FaultProxyTarget,
  ) {
    server.on('connection', (client: Socket) => this.onConnection(client));
  }

  /** Starts listening on 127.0.0.1; resolves once the port is bound. */
  static async start(options: FaultProxyOptions): Promise<FaultProxy> {
    const server = createServer({ allowHalfOpen: true });
    const proxy = new FaultProxy(server, { ...options.target });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.listenPort ?? 0, LISTEN_HOST, () => {
        server.off('error', reject);
        resolve();
      });
    });
    server.on('error', () => undefined);
    return proxy;
  }

  /**
   * A proxy in front of the server a URL names (`amqp:`, `amqps:`, `redis:`, `rediss:`; the
   * scheme's default port when the URL has none). Pass its `url(sameUrl)` to the client.
   */
  static forUrl(serverUrl: string): Promise<FaultProxy> {
    const url = new URL(serverUrl);
    const port = url.port === '' ? defaultPorts[url.protocol] : Number(url.port);
    if (port === undefined) throw new Error(`FaultProxy.forUrl: no default port for ${url.protocol} (give one in the URL)`);
    return FaultProxy.start({ target: { host: url.hostname, port } });
  }

  /** The port the proxy listens on. */
  get port(): number {
    const address = this.server.address();
    if (address === null || typeof address === 'string') throw new Error('FaultProxy is not listening');
    return address.port;
  }

  /** Open client/upstream pairs. */
  get connectionCount(): number {
    return this.pairs.size;
  }

  /** Connections ever proxied (refused ones not included). */
  get totalConnections(): number {
    return this.accepted;
  }

  /** Connections closed on arrival because of `refuse(true)` or `close()`. */
  get refusedConnections(): number {
    return this.refused;
  }

  /** `originalUrl` with host and port replaced by the proxy's; credentials, path and query kept. */
  url(originalUrl: string): string {
    const url = new URL(originalUrl);
    url.hostname = LISTEN_HOST;
    url.port = String(this.port);
    return url.toString();
  }

  /** Kills every open connection now, with an RST where possible: a network cut or server crash. */
  cutAll(): void {
    for (const pair of [...this.pairs]) pair.destroy(true);
  }

  /** Holds all bytes in both directions, and of new connections, without closing: a network hang. */
  stall(): void {
    this.settings.stalled = true;
    for (const pair of this.pairs) pair.pump();
  }

  /** Ends a stall: held bytes are delivered in order. */
  resume(): void {
    this.settings.stalled = false;
    for (const pair of this.pairs) pair.pump();
  }

  /** Delays every chunk received from now on by `ms` in each direction, keeping order. */
  setLatency(ms: number): void {
    if (!Number.isFinite(ms) || ms < 0) throw new RangeError(`latency must be a finite number >= 0, got ${ms}`);
    this.settings.latencyMs = ms;
  }

  /** While on, new connections are closed as soon as they arrive; open ones are untouched. */
  refuse(on: boolean): void {
    this.refusing = on;
  }

  /** Closes the listener and every connection; safe to call more than once. */
  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  private async shutdown(): Promise<void> {
    for (const pair of [...this.pairs]) pair.destroy(false);
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private onConnection(client: Socket): void {
    client.on('error', () => undefined);
    if (this.refusing || this.closing !== undefined) {
      this.refused += 1;
      client.destroy();
      return;
    }
    this.accepted += 1;
    const upstream = createConnection({ host: this.target.host, port: this.target.port, allowHalfOpen: true });
    const pair = new FaultPair(client, upstream, this.settings, (done) => this.pairs.delete(done));
    this.pairs.add(pair);
  }
}
