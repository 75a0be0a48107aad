import { EventEmitter } from 'node:events';
import type { ConnectionState, OnOpen, WireConnection, WireModel } from '../contract';
import { MemoryChannel } from './channel';
import { MemoryIllegalOperationError } from './errors';
import type { BrokerState } from './state';
import { Setups } from '../setups';

/** One "TCP connection" to a MemoryBroker: a channel factory. Its exclusive queues go when it closes. */
export class MemoryModel extends EventEmitter implements WireModel {
  private readonly channels = new Set<MemoryChannel>();
  private channelSeq = 0;
  private closed = false;

  constructor(
    private readonly state: BrokerState,
    readonly id: number,
  ) {
    super();
  }

  createChannel(): Promise<MemoryChannel> {
    return this.open(false);
  }

  createConfirmChannel(): Promise<MemoryChannel> {
    return this.open(true);
  }

  close(): Promise<void> {
    if (this.closed) return Promise.reject(new MemoryIllegalOperationError('Connection closed'));
    return new Promise((resolve) =>
      this.state.timers.defer(() => {
        this.end(undefined);
        resolve();
      }),
    );
  }

  /** Ends at once, as when the socket goes: channels close, exclusive queues are deleted, 'close' (with `error`) is emitted. */
  end(error: Error | undefined): void {
    if (this.closed) return;
    this.closed = true;
    for (const ch of this.channels) ch.connectionClosed();
    this.channels.clear();
    this.state.connectionClosed(this.id);
    if (error && this.listenerCount('error') > 0) this.emit('error', error);
    this.emit('close', error);
  }

  private open(confirm: boolean): Promise<MemoryChannel> {
    if (this.closed) return Promise.reject(new MemoryIllegalOperationError('Connection closed'));
    const channel = new MemoryChannel(this.state, this.id, ++this.channelSeq, confirm, (error) => this.end(error));
    this.channels.add(channel);
    channel.once('close', () => this.channels.delete(channel));
    return new Promise((resolve, reject) => this.state.timers.defer(() => (this.closed ? reject(new MemoryIllegalOperationError('Connection closed')) : resolve(channel))));
  }
}

interface ConnectionEvents {
  state: [ConnectionState];
  open: [WireModel];
  lost: [Error];
}

export interface MemoryConnectionOptions {
  readonly clustered: boolean;
  readonly reconnectDelayMs: number;
}

/**
 * A WireConnection to a MemoryBroker, open from the start. Like
 * AmqpConnection it re-runs its setups on every fresh model, so
 * `simulateLoss()` exercises the same recovery paths without RabbitMQ.
 */
export class MemoryConnection extends EventEmitter<ConnectionEvents> implements WireConnection {
  private current: MemoryModel | undefined;
  private status: ConnectionState = { type: 'idle' };
  private readonly setups = new Setups();
  private closing: Promise<void> | undefined;
  private reconnectTimer: NodeJS.Timeout | undefined;
  reconnects = 0;

  constructor(
    private readonly broker: BrokerState,
    private readonly nextId: () => number,
    private readonly options: MemoryConnectionOptions,
    private readonly onClosed: (c: MemoryConnection) => void,
  ) {
    super();
    this.current = new MemoryModel(broker, nextId());
    this.watch(this.current);
    this.status = { type: 'open', url: 'memory://' };
  }

  get model(): MemoryModel | undefined {
    return this.current;
  }

  get clustered(): boolean {
    return this.options.clustered;
  }

  get state(): ConnectionState {
    return this.status;
  }

  async onOpen(setup: OnOpen): Promise<() => void> {
    return this.setups.add(setup, this.current);
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      this.setState({ type: 'closing' });
      this.broker.timers.clear(this.reconnectTimer);
      const model = this.current;
      this.current = undefined;
      if (model) {
        model.removeAllListeners('close');
        model.end(undefined);
      }
      this.setState({ type: 'closed' });
      this.onClosed(this);
    })();
    return this.closing;
  }

  /** Drops the connection as a network cut would; it comes back after `reconnectDelayMs` and re-runs its setups. */
  async simulateLoss(): Promise<void> {
    const model = this.current;
    if (!model) return;
    const lost = new Promise<void>((resolve) => this.once('lost', () => resolve()));
    model.end(new Error('simulated connection loss'));
    await lost;
  }

  private watch(model: MemoryModel): void {
    model.on('close', (err?: Error) => {
      if (this.current !== model || this.closing) return;
      this.current = undefined;
      const error = err ?? new Error('connection closed by the server');
      this.setState({ type: 'reconnecting', attempt: 1, delayMs: this.options.reconnectDelayMs, error });
      this.emit('lost', error);
      this.reconnectTimer = this.broker.timers.after(this.options.reconnectDelayMs, () => void this.reconnect());
    });
  }

  private async reconnect(): Promise<void> {
    if (this.closing) return;
    const model = new MemoryModel(this.broker, this.nextId());
    this.current = model;
    this.watch(model);
    try {
      await this.setups.runOn(model);
    } catch (err) {
      // As AmqpConnection: a setup that fails fails this attempt, and the next one comes after the delay.
      if (this.current === model && !this.closing) model.end(err instanceof Error ? err : new Error(String(err)));
      return;
    }
    if (this.current !== model) return;
    this.reconnects++;
    this.setState({ type: 'open', url: 'memory://' });
    this.emit('open', model);
  }

  private setState(state: ConnectionState): void {
    this.status = state;
    this.emit('state', state);
  }
}
