import { EventEmitter } from 'node:events';
import type { Writable } from 'node:stream';
import amqp, { type ChannelModel } from 'amqplib';
import { definedOnly } from '@warren/jsonrpc';
import { redactUrl, silentLogger, type Logger } from '@warren/logger';
import { backoffDelay, defaultBackoff, type BackoffOptions, type ResolvedBackoff } from './backoff';
import { closeModel, destroySocket } from './close';
import type { ConnectionState, OnOpen, WireConnection } from './contract';
import { checkAmqpUrls } from './amqp-urls';
import { Setups } from './setups';

export type { ConnectionState, OnOpen } from './contract';

export interface TlsOptions {
  readonly ca?: string | Buffer | (string | Buffer)[];
  readonly cert?: string | Buffer;
  readonly key?: string | Buffer;
  readonly passphrase?: string;
  /** @default true */
  readonly rejectUnauthorized?: boolean;
  readonly servername?: string;
}

export interface ConnectionOptions {
  /** One URL or the nodes of a cluster, tried in turn on connect and reconnect. `amqps://` uses TLS. */
  readonly urls: string | readonly string[];
  /** Seconds between heartbeats; a stalled peer is detected after about two of them. @default 10 */
  readonly heartbeatSeconds?: number;
  /** Time allowed for the first connection (all URLs, with backoff) before `start()` fails. @default 30000 */
  readonly startTimeoutMs?: number;
  /** Socket connect timeout for one attempt. @default 5000 */
  readonly socketTimeoutMs?: number;
  readonly reconnect?: BackoffOptions;
  /** Shown in the RabbitMQ management UI. @default 'warren' */
  readonly connectionName?: string;
  readonly tls?: TlsOptions;
  /** @default a silent logger */
  readonly logger?: Logger;
}


interface ConnectionEvents {
  state: [ConnectionState];
  open: [ChannelModel];
  lost: [Error];
  blocked: [string];
  unblocked: [];
}

/**
 * One AMQP connection that comes back by itself. Owners register `onOpen`
 * setups that are re-run after every reconnect, so topology and consumers are
 * always re-declared. Auth failures are not retried.
 */
export class AmqpConnection extends EventEmitter<ConnectionEvents> implements WireConnection {
  private current: ChannelModel | undefined;
  private status: ConnectionState = { type: 'idle' };
  private readonly setups = new Setups();
  private readonly urls: readonly string[];
  private readonly backoff: ResolvedBackoff;
  private readonly log: Logger;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private urlIndex = 0;
  private closing: Promise<void> | undefined;
  /** Ends a backoff wait in `start()` early when `close()` is called. */
  private wakeStart: (() => void) | undefined;
  /** Successful reconnects since start, for metrics. */
  reconnects = 0;

  constructor(private readonly options: ConnectionOptions) {
    super();
    this.urls = typeof options.urls === 'string' ? [options.urls] : [...options.urls];
    if (this.urls.length === 0) throw new TypeError('ConnectionOptions.urls must name at least one URL');
    checkAmqpUrls(this.urls);
    this.backoff = { ...defaultBackoff, ...definedOnly(options.reconnect ?? {}) };
    this.log = (options.logger ?? silentLogger()).child({ component: 'amqp-connection' });
  }

  get state(): ConnectionState {
    return this.status;
  }

  /** Whether the connection names several nodes (a cluster): services then default to quorum queues. */
  get clustered(): boolean {
    return this.urls.length > 1;
  }

  /** The open channel model, or undefined while (re)connecting or closed. */
  get model(): ChannelModel | undefined {
    return this.current;
  }

  /** Registers a setup and, if the connection is already open, runs it now. Returns an unregister function. */
  async onOpen(setup: OnOpen): Promise<() => void> {
    return this.setups.add(setup, this.current);
  }

  /** Connects for the first time, retrying with backoff within `startTimeoutMs`. */
  async start(): Promise<void> {
    if (this.status.type !== 'idle') throw new Error(`start() called in state ${this.status.type}`);
    const giveUpAt = Date.now() + (this.options.startTimeoutMs ?? 30_000);
    for (let attempt = 1; ; attempt++) {
      this.setState({ type: 'connecting', attempt });
      try {
        await this.connectOnce();
        return;
      } catch (error) {
        const err = asError(error);
        if (this.isClosing()) throw err;
        const delayMs = backoffDelay(attempt, this.backoff);
        if (isAuthFailure(err) || Date.now() + delayMs > giveUpAt) {
          this.setState({ type: 'closed', error: err });
          throw err;
        }
        this.log.warn({ err, attempt, delayMs }, 'amqp connect failed, retrying');
        await new Promise<void>((resolve) => {
          this.wakeStart = resolve;
          this.reconnectTimer = setTimeout(resolve, delayMs);
        });
        this.reconnectTimer = undefined;
        this.wakeStart = undefined;
        if (this.isClosing()) throw new Error('connection closed during start', { cause: error });
      }
    }
  }

  /** Closes the connection and stops reconnecting. Idempotent; channels owned by others close with it. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.setState({ type: 'closing' });
      clearTimeout(this.reconnectTimer);
      this.reconnectTimer = undefined;
      this.wakeStart?.();
      const model = this.current;
      this.current = undefined;
      if (model) {
        model.removeAllListeners('close');
        await closeModel(model);
      }
      this.setState({ type: 'closed' });
    })();
    return this.closing;
  }

  /** Cuts the connection as if the network had, to exercise recovery. */
  async simulateLoss(): Promise<void> {
    const model = this.current as (ChannelModel & { connection: { stream?: { destroy(error?: Error): void } } }) | undefined;
    if (!model) return;
    const lost = new Promise<void>((resolve) => this.once('lost', () => resolve()));
    model.connection.stream?.destroy(new Error('simulated connection loss'));
    await lost;
  }

  private async connectOnce(): Promise<void> {
    let lastError: Error = new Error('no URL tried');
    for (let i = 0; i < this.urls.length; i++) {
      const url = this.urls[(this.urlIndex + i) % this.urls.length] as string;
      let model: ChannelModel | undefined;
      try {
        model = await amqp.connect(withHeartbeat(url, this.options.heartbeatSeconds ?? 10), {
          // Without noDelay, a reply published just before an ack waits ~40 ms on delayed ACK.
          noDelay: true,
          timeout: this.options.socketTimeoutMs ?? 5000,
          clientProperties: { connection_name: this.options.connectionName ?? 'warren' },
          ...(this.options.tls ?? {}),
        });
        // close() ran while we were connecting: nobody wants this connection any more.
        if (this.isClosing()) throw new Error('connection closed while connecting');
        this.urlIndex = (this.urlIndex + i) % this.urls.length;
        this.attach(model, url);
        // A setup waiting on a connection that died may never settle (amqplib leaves some promises
        // pending when the socket goes): the attempt fails as soon as the connection closes.
        const lost = closed(model);
        try {
          await this.setups.runOn(model, lost.promise);
        } finally {
          lost.release();
        }
        // Lost while the setups ran (see attach): fail this attempt, so the one retry loop makes the next.
        if (this.current !== model) throw new Error('connection lost during setup');
        this.setState({ type: 'open', url: redactUrl(url) });
        this.emit('open', model);
        return;
      } catch (error) {
        lastError = asError(error);
        this.log.debug({ err: lastError, url: redactUrl(url) }, 'amqp connect attempt failed');
        if (model) {
          model.removeAllListeners('close');
          this.current = undefined;
          await closeModel(model);
        }
        if (isAuthFailure(lastError) || this.isClosing()) throw lastError;
      }
    }
    throw lastError;
  }

  private attach(model: ChannelModel, url: string): void {
    this.current = model;
    coalesceWrites(model);
    model.on('error', (err: Error) => this.log.warn({ err, url: redactUrl(url) }, 'amqp connection error'));
    model.on('blocked', (reason: string) => this.emit('blocked', reason));
    model.on('unblocked', () => this.emit('unblocked'));
    model.on('close', (err?: Error) => {
      if (this.current !== model || this.isClosing()) return;
      this.current = undefined;
      // amqplib only ends the socket (after a heartbeat timeout, say); a stalled peer would keep it half-open.
      destroySocket(model);
      // Lost before it was open: the attempt in progress (start() or a reconnect) fails and retries.
      // Scheduling a reconnect here as well would run two loops, each leaving a live connection behind.
      if (this.status.type !== 'open') return;
      const error = err ?? new Error('connection closed by the server');
      this.log.warn({ err: error }, 'amqp connection lost');
      this.emit('lost', error);
      this.scheduleReconnect(1, error);
    });
  }

  private scheduleReconnect(attempt: number, error: Error): void {
    if (this.isClosing()) return;
    const delayMs = backoffDelay(attempt, this.backoff);
    this.setState({ type: 'reconnecting', attempt, delayMs, error });
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      if (this.isClosing()) return;
      this.connectOnce().then(
        () => {
          this.reconnects++;
          this.log.info({ attempt }, 'amqp reconnected');
        },
        (err: unknown) => {
          const e = asError(err);
          if (isAuthFailure(e)) {
            this.log.error({ err: e }, 'amqp credentials refused; not retrying');
            this.setState({ type: 'closed', error: e });
            return;
          }
          this.scheduleReconnect(attempt + 1, e);
        },
      );
    }, delayMs);
  }

  private isClosing(): boolean {
    return this.closing !== undefined;
  }

  private setState(state: ConnectionState): void {
    this.status = state;
    this.emit('state', state);
  }
}

/**
 * amqplib writes every frame to the socket separately, and with noDelay each
 * write is its own syscall and packet. Corking the socket for the rest of the
 * current tick sends everything written in that tick (a reply and its ack, the
 * publishes of many concurrent calls) in one writev, without adding any delay.
 */
function coalesceWrites(model: ChannelModel): void {
  const socket = (model as ChannelModel & { connection: { stream?: Writable } }).connection.stream;
  if (!socket || typeof socket.cork !== 'function') return;
  const write = socket.write.bind(socket) as (...args: unknown[]) => boolean;
  let corked = false;
  const uncork = (): void => {
    corked = false;
    socket.uncork();
  };
  socket.write = ((...args: unknown[]): boolean => {
    if (!corked) {
      corked = true;
      socket.cork();
      process.nextTick(uncork);
    }
    return write(...args);
  }) as Writable['write'];
}

/**
 * A promise that rejects when `model` closes (never resolves; already marked handled, for use in
 * races), and `release` to stop listening once the race is over, so no listener outlives it.
 */
function closed(model: ChannelModel): { promise: Promise<never>; release(): void } {
  let onClose: ((err?: Error) => void) | undefined;
  const promise = new Promise<never>((_resolve, reject) => {
    onClose = (err?: Error): void => reject(err ?? new Error('connection lost during setup'));
    model.once('close', onClose);
  });
  promise.catch(() => undefined);
  return { promise, release: () => void (onClose && model.off('close', onClose)) };
}

function withHeartbeat(url: string, seconds: number): string {
  if (/[?&]heartbeat=/.test(url)) return url;
  return `${url}${url.includes('?') ? '&' : '?'}heartbeat=${seconds}`;
}

/** amqplib reports refused credentials only in the message text (reply code 403 ACCESS_REFUSED). */
function isAuthFailure(error: Error): boolean {
  return /ACCESS_REFUSED|\b403\b|PLAIN login refused/i.test(error.message);
}

function asError(value: unknown): Error {
  return value instanceof Error ? value : new Error(String(value));
}

