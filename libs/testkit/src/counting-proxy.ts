import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { AmqpFrameReader } from './amqp-frames';
import { RespReader } from './resp-values';

/** What a {@link CountingProxy} reads in the bytes it passes: AMQP 0-9-1 frames, RESP (Redis) values, or nothing but bytes. */
export type CountingProtocol = 'amqp' | 'resp' | 'bytes';

/** Figures by name, e.g. `sent basic.publish`, `received bytes`, `EVALSHA`, `round trips`. */
export type Counts = Record<string, number>;

/** Options for {@link CountingProxy.start}. */
export interface CountingProxyOptions {
  /** Where to forward: RabbitMQ, Redis, an HTTP server. */
  readonly target: { readonly host: string; readonly port: number };
  readonly protocol: CountingProtocol;
}

const LISTEN_HOST = '127.0.0.1';
const SUBSCRIBING = new Set(['SUBSCRIBE', 'PSUBSCRIBE', 'SSUBSCRIBE']);

/**
 * A TCP proxy that counts what one process says to a server, for the per-call cost budget
 * (test/budget/). Give each process its own proxy (`proxy.url(amqpUrl())`): the figures are then that
 * process's alone, whatever else uses the same server. "Sent" is the process's direction (client to
 * server), "received" the server's. Counted on every connection through the proxy:
 *
 * - `sent bytes`, `received bytes`, `connections`;
 * - `amqp`: `sent <class.method>` / `received <class.method>` per method frame (`sent basic.publish`,
 *   `received basic.ack`: from the server, a publisher confirm), `sent methods` / `received methods`
 *   (their sum), `sent frames` / `received frames` (every frame), `sent content header frames`,
 *   `... content body frames`, `... heartbeat frames`;
 * - `resp`: `<COMMAND>` per command (`EVALSHA`), `commands`, `replies`, and `round trips`:
 *   how often a connection with no command awaiting its reply sent one (pipelined commands, or those
 *   sent while others wait, ride on the round trip already open). Subscriber connections count
 *   commands but no round trips.
 *
 * Bytes are forwarded untouched (and with back-pressure); the counting never changes them.
 * `close()` ends every connection and the listener; safe to call twice.
 */
export class CountingProxy {
  private readonly counts = new Map<string, number>();
  private readonly sockets = new Set<Socket>();
  private closing: Promise<void> | undefined;
  private lastActivity = performance.now();

  private constructor(
    private readonly server: Server,
    private readonly options: CountingProxyOptions,
  ) {
    server.on('connection', (client: Socket) => this.onConnection(client));
  }

  /** Starts listening on 127.0.0.1, on a free port; resolves once bound. */
  static async start(options: CountingProxyOptions): Promise<CountingProxy> {
    const server = createServer();
    const proxy = new CountingProxy(server, options);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, LISTEN_HOST, () => {
        server.off('error', reject);
        resolve();
      });
    });
    server.on('error', () => undefined);
    return proxy;
  }

  /** A proxy in front of the server `serverUrl` names (its port required unless `amqp:` or `redis:`). */
  static forUrl(serverUrl: string, protocol: CountingProtocol): Promise<CountingProxy> {
    const url = new URL(serverUrl);
    const defaults: Record<string, number> = { 'amqp:': 5672, 'redis:': 6379 };
    const port = url.port === '' ? defaults[url.protocol] : Number(url.port);
    if (port === undefined) throw new Error(`CountingProxy.forUrl: no port in ${url.protocol} URL`);
    return CountingProxy.start({ target: { host: url.hostname, port }, protocol });
  }

  get port(): number {
    const address = this.server.address();
    if (address === null || typeof address === 'string') throw new Error('CountingProxy is not listening');
    return address.port;
  }

  /** `originalUrl` with host and port replaced by the proxy's; credentials, path and query kept. */
  url(originalUrl: string): string {
    const url = new URL(originalUrl);
    url.hostname = LISTEN_HOST;
    url.port = String(this.port);
    return url.toString();
  }

  /** Every figure so far (a copy). */
  snapshot(): Counts {
    return Object.fromEntries(this.counts);
  }

  /** Milliseconds since a byte last passed either way: a measurement waits for quiet before its last snapshot. */
  idleMs(): number {
    return performance.now() - this.lastActivity;
  }

  close(): Promise<void> {
    this.closing ??= new Promise<void>((resolve) => {
      for (const socket of this.sockets) socket.destroy();
      this.server.close(() => resolve());
    });
    return this.closing;
  }

  private add(name: string, n = 1): void {
    this.counts.set(name, (this.counts.get(name) ?? 0) + n);
  }

  private onConnection(client: Socket): void {
    if (this.closing !== undefined) {
      client.destroy();
      return;
    }
    const upstream = createConnection(this.options.target);
    for (const socket of [client, upstream]) {
      this.sockets.add(socket);
      socket.setNoDelay(true);
      socket.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
      socket.on('close', () => {
        this.sockets.delete(socket);
        (socket === client ? upstream : client).destroy();
      });
    }
    this.add('connections');
    const [up, down] = this.readers();
    client.on('data', (chunk: Buffer) => this.passed('sent', chunk, up));
    upstream.on('data', (chunk: Buffer) => this.passed('received', chunk, down));
    client.pipe(upstream);
    upstream.pipe(client);
  }

  private passed(direction: 'sent' | 'received', chunk: Buffer, read: (chunk: Buffer) => void): void {
    this.lastActivity = performance.now();
    this.add(`${direction} bytes`, chunk.length);
    read(chunk);
  }

  /** The (sent, received) readers of one connection. */
  private readers(): [(chunk: Buffer) => void, (chunk: Buffer) => void] {
    switch (this.options.protocol) {
      case 'bytes':
        return [() => undefined, () => undefined];
      case 'amqp': {
        const sent = new AmqpFrameReader((name, n) => this.add(`sent ${name}`, n));
        const received = new AmqpFrameReader((name, n) => this.add(`received ${name}`, n));
        return [(c) => sent.push(c), (c) => received.push(c)];
      }
      case 'resp': {
        let awaiting = 0;
        let subscriber = false;
        const unparsed = (n: number): void => this.add('unparsed bytes', n);
        const sent = new RespReader(true, (name) => {
          this.add('commands');
          this.add(name ?? '(inline)');
          if (name !== undefined && SUBSCRIBING.has(name)) subscriber = true;
          if (subscriber) return;
          if (awaiting === 0) this.add('round trips');
          awaiting += 1;
        }, unparsed);
        const received = new RespReader(false, () => {
          this.add('replies');
          awaiting = Math.max(0, awaiting - 1);
        }, unparsed);
        return [(c) => sent.push(c), (c) => received.push(c)];
      }
    }
  }
}

/** `after - before`, figure by figure (figures absent before count from 0). */
export function countsDelta(before: Counts, after: Counts): Counts {
  const delta: Counts = {};
  for (const [name, value] of Object.entries(after)) {
    const d = value - (before[name] ?? 0);
    if (d !== 0) delta[name] = d;
  }
  return delta;
}
