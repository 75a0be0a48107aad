import type { WireQueueInfo } from '../contract';
import { MemoryConnection } from './connection';
import { BrokerState } from './state';

export interface MemoryBrokerOptions {
  /** What connections report as `clustered` (services then default to quorum queues). @default false */
  readonly clustered?: boolean;
  /** How long a connection cut by `simulateLoss()` stays down. @default 10 */
  readonly reconnectDelayMs?: number;
}

/**
 * A RabbitMQ in memory, for tests and the embedded mode: exchanges, queues,
 * bindings and the AMQP semantics Warren relies on (see the package README,
 * "In memory"). Not durable: everything goes with the process.
 *
 * @example
 * const bus = new MemoryBroker();
 * const service = await startService({ connection: bus.connect(), name: 'calc', methods });
 * const client = await connectClient({ connection: bus.connect() });
 * ...
 * await bus.close();
 */
export class MemoryBroker {
  private readonly state = new BrokerState();
  private readonly connections = new Set<MemoryConnection>();
  private connectionSeq = 0;
  private closed = false;

  constructor(private readonly options: MemoryBrokerOptions = {}) {}

  /** A new connection, open at once (many per broker, like many TCP connections to one RabbitMQ). */
  connect(): MemoryConnection {
    if (this.closed) throw new Error('MemoryBroker is closed');
    const connection = new MemoryConnection(this.state, () => ++this.connectionSeq, { clustered: this.options.clustered ?? false, reconnectDelayMs: this.options.reconnectDelayMs ?? 10 }, (c) => this.connections.delete(c));
    this.connections.add(connection);
    return connection;
  }

  /** Closes every connection and drops every queue; clears the broker's timers. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const c of [...this.connections]) await c.close();
    this.state.close();
  }

  /** A queue's counts (ready messages, consumers), or undefined if it does not exist: what the management UI would show. */
  queue(name: string): WireQueueInfo | undefined {
    const q = this.state.queues.get(name);
    return q ? { queue: name, messageCount: q.messages.length, consumerCount: q.consumers.length } : undefined;
  }

  /**
   * Simulates the loss of a classic queue's home node, as RabbitMQ 3.10 behaves (BrokerState.takeDown):
   * consumers cancelled, declares and consumes 404, publishes returned NO_ROUTE; `up()` brings it back.
   */
  takeQueueDown(name: string): { up(): void } {
    return this.state.takeDown(name);
  }

  /** Names of the queues that exist now. */
  queueNames(): string[] {
    return [...this.state.queues.keys()];
  }

  /** Timers the broker holds (TTLs, x-expires, reconnects); 0 after close. */
  get pendingTimers(): number {
    return this.state.timers.pending;
  }
}
