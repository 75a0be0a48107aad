import { randomBytes } from 'node:crypto';
import type { WireExchangeOptions, WireExchangeType, WireHeaders, WireProperties, WireQueueInfo, WireQueueOptions } from '../contract';
import { assertPermittedQueue } from './deprecated';
import { MemoryChannelError, notFound, preconditionFailed, resourceLocked } from './errors';
import { directReplyTo, type ChannelHost, type ReplyChannel } from './host';
import { cloneTable, copyProperties, expirationMs, type StoredMessage } from './message';
import { MemoryQueue, type DeathReason, type QueueHost } from './queue';
import { route, type Binding, type MemoryExchange } from './routing';
import { BrokerTimers } from './timers';

/** Queue arguments RabbitMQ compares on a redeclare (a different value is a 406). */
const compared = ['x-message-ttl', 'x-expires', 'x-dead-letter-exchange', 'x-dead-letter-routing-key', 'x-max-length', 'x-delivery-limit'];

/** The broker's exchanges, queues and routing: what one RabbitMQ vhost holds. */
export class BrokerState implements ChannelHost, QueueHost {
  readonly timers = new BrokerTimers();
  readonly exchanges = new Map<string, MemoryExchange>();
  readonly queues = new Map<string, MemoryQueue>();
  private readonly replyChannels = new Map<string, ReplyChannel>();
  /** Queues whose home node is down (takeDown): they and their bindings stay, but nothing reaches them. */
  private readonly down = new Set<string>();

  constructor() {
    for (const [name, type] of [['amq.direct', 'direct'], ['amq.topic', 'topic'], ['amq.fanout', 'fanout']] as const) this.exchanges.set(name, { name, type, durable: true, bindings: [] });
  }

  assertExchange(name: string, type: WireExchangeType, options: WireExchangeOptions): void {
    const existing = this.exchanges.get(name);
    const durable = options.durable ?? true;
    if (!existing) return void this.exchanges.set(name, { name, type, durable, bindings: [] });
    if (existing.type !== type) throw preconditionFailed(`inequivalent arg 'type' for exchange '${name}' in vhost '/': received '${type}' but current is '${existing.type}'`);
    if (existing.durable !== durable) throw preconditionFailed(`inequivalent arg 'durable' for exchange '${name}' in vhost '/': received '${String(durable)}' but current is '${String(existing.durable)}'`);
  }

  assertQueue(name: string, options: WireQueueOptions, connectionId: number): WireQueueInfo {
    const queueName = name === '' ? `amq.gen-${randomBytes(16).toString('base64url')}` : name;
    assertPermittedQueue(queueName, options);
    this.assertUp(queueName);
    const existing = this.queues.get(queueName);
    if (existing) {
      this.assertAccess(existing, connectionId);
      assertEquivalent(existing, options);
      existing.touch();
      return info(existing);
    }
    const owner = options.exclusive ? connectionId : undefined;
    const queue = new MemoryQueue(queueName, { durable: true, ...options }, owner, this);
    this.queues.set(queueName, queue);
    return info(queue);
  }

  checkQueue(name: string, connectionId: number): WireQueueInfo {
    return info(this.queueFor(name, connectionId));
  }

  queueFor(name: string, connectionId: number): MemoryQueue {
    this.assertUp(name);
    const queue = this.queues.get(name);
    if (!queue) throw notFound('queue', name);
    this.assertAccess(queue, connectionId);
    return queue;
  }

  /**
   * As RabbitMQ 3.10 does with a durable classic queue whose home node goes down (measured on a cluster,
   * issue 28): its consumers are cancelled; declaring, checking or consuming it answers 404; a publish
   * routed only to it is returned 312 NO_ROUTE (and confirmed), like one no queue is bound for. Its
   * messages and bindings stay, for when the node is back (`up`).
   */
  takeDown(name: string): { up(): void } {
    const queue = this.queues.get(name);
    if (!queue) throw new Error(`no queue ${name} to take down`);
    this.down.add(name);
    const consumers = queue.consumers.splice(0);
    if (consumers.length > 0) this.timers.defer(() => consumers.forEach((c) => c.cancelled()));
    return { up: () => void this.down.delete(name) };
  }

  private assertUp(name: string): void {
    if (this.down.has(name)) throw new MemoryChannelError(404, `home node 'memory@localhost' of durable queue '${name}' in vhost '/' is down or inaccessible`);
  }

  /** Deleting a missing queue is not an error (RabbitMQ answers delete-ok with 0). */
  deleteQueue(name: string): number {
    const queue = this.queues.get(name);
    if (!queue) return 0;
    this.queues.delete(name);
    queue.dispose();
    for (const e of this.exchanges.values()) {
      for (let i = e.bindings.length - 1; i >= 0; i--) if (e.bindings[i]?.queue === name && e.bindings[i]?.toExchange !== true) e.bindings.splice(i, 1);
    }
    // The broker cancels its consumers: basic.cancel reaches them after the delete, as a frame would.
    const consumers = queue.consumers.splice(0);
    if (consumers.length > 0) this.timers.defer(() => consumers.forEach((c) => c.cancelled()));
    return queue.messages.length;
  }

  purgeQueue(name: string, connectionId: number): number {
    return this.queueFor(name, connectionId).purge();
  }

  bindQueue(queue: string, exchange: string, pattern: string, args: Record<string, unknown> | undefined, connectionId: number): void {
    this.queueFor(queue, connectionId);
    this.addBinding(exchange, { queue, pattern, ...(args === undefined ? {} : { args: { ...args } }) });
  }

  bindExchange(destination: string, source: string, pattern: string, args: Record<string, unknown> | undefined): void {
    if (!this.exchanges.has(destination)) throw notFound('exchange', destination);
    this.addBinding(source, { queue: destination, pattern, toExchange: true, ...(args === undefined ? {} : { args: { ...args } }) });
  }

  /** A binding is the same one (not added twice) when its destination, pattern and arguments are. */
  private addBinding(exchange: string, binding: Binding): void {
    const e = this.exchanges.get(exchange);
    if (!e) throw notFound('exchange', exchange);
    const same = (b: Binding): boolean => b.queue === binding.queue && b.pattern === binding.pattern && (b.toExchange ?? false) === (binding.toExchange ?? false) && JSON.stringify(b.args ?? {}) === JSON.stringify(binding.args ?? {});
    if (!e.bindings.some(same)) e.bindings.push(binding);
  }

  publish(exchange: string, routingKey: string, content: Buffer, properties: WireProperties): boolean {
    const ttl = expirationMs(properties.expiration);
    if (Number.isNaN(ttl)) throw preconditionFailed(`invalid expiration '${String(properties.expiration)}'`);
    if (exchange === '') {
      if (routingKey.startsWith(`${directReplyTo}.`)) {
        const channel = this.replyChannels.get(routingKey);
        if (!channel) return false;
        channel.deliverReply(content, routingKey, { properties, exchange, routingKey, redelivered: false, returns: 0, expiresAt: undefined });
        return true;
      }
      const queue = this.queues.get(routingKey);
      if (!queue) return false;
      this.enqueue(queue, exchange, routingKey, content, properties, ttl);
      return true;
    }
    const e = this.exchanges.get(exchange);
    if (!e) throw notFound('exchange', exchange);
    return this.routeTo(route(e, routingKey, properties.headers, this.exchangeOf), exchange, routingKey, content, properties, ttl);
  }

  deadLetter(queue: MemoryQueue, msg: StoredMessage, reason: DeathReason): void {
    const dlx = queue.args.deadLetterExchange;
    if (dlx === undefined) return;
    const routingKey = queue.args.deadLetterRoutingKey ?? msg.routingKey;
    const headers = deathHeaders(msg, queue.name, reason);
    // The per-message TTL does not follow a message into its dead-letter queue (x-death keeps it as original-expiration).
    const properties: WireProperties = { ...msg.properties, headers, expiration: undefined };
    const target = dlx === '' ? (this.queues.has(routingKey) ? new Set([routingKey]) : new Set<string>()) : this.exchanges.get(dlx) ? route(this.exchanges.get(dlx) as MemoryExchange, routingKey, headers, this.exchangeOf) : new Set<string>();
    this.routeTo(target, dlx, routingKey, msg.content, properties, undefined);
  }

  private readonly exchangeOf = (name: string): MemoryExchange | undefined => this.exchanges.get(name);

  deliveredProperties(queue: MemoryQueue, msg: StoredMessage): WireProperties {
    if (!queue.args.quorum || msg.returns === 0) return copyProperties(msg.properties);
    return copyProperties(msg.properties, { ...(msg.properties.headers ?? {}), 'x-delivery-count': msg.returns });
  }

  registerReplyTo(channel: ReplyChannel): string {
    if (channel.replyAddress) return channel.replyAddress;
    const address = `${directReplyTo}.${randomBytes(12).toString('base64url')}`;
    this.replyChannels.set(address, channel);
    return address;
  }

  releaseReplyTo(address: string): void {
    this.replyChannels.delete(address);
  }

  channelClosed(_channel: ReplyChannel): void {
    // Nothing held per channel beyond what the channel releases itself.
  }

  /** A connection closed: its exclusive queues go with it. */
  connectionClosed(connectionId: number): void {
    for (const q of [...this.queues.values()]) if (q.owner === connectionId) this.deleteQueue(q.name);
  }

  close(): void {
    this.timers.close();
    for (const q of this.queues.values()) q.dispose();
    this.queues.clear();
    this.replyChannels.clear();
  }

  private routeTo(queues: Set<string>, exchange: string, routingKey: string, content: Buffer, properties: WireProperties, ttl: number | undefined): boolean {
    let routed = false;
    for (const name of queues) {
      const queue = this.queues.get(name);
      if (!queue || this.down.has(name)) continue;
      this.enqueue(queue, exchange, routingKey, content, properties, ttl);
      routed = true;
    }
    return routed;
  }

  private enqueue(queue: MemoryQueue, exchange: string, routingKey: string, content: Buffer, properties: WireProperties, ttl: number | undefined): void {
    const queueTtl = queue.args.messageTtl;
    const effective = ttl === undefined ? queueTtl : queueTtl === undefined ? ttl : Math.min(ttl, queueTtl);
    queue.enqueue({
      content: Buffer.from(content),
      properties: copyProperties(properties),
      exchange,
      routingKey,
      redelivered: false,
      returns: 0,
      expiresAt: effective === undefined ? undefined : Date.now() + effective,
    });
  }

  private assertAccess(queue: MemoryQueue, connectionId: number): void {
    if (queue.owner !== undefined && queue.owner !== connectionId) throw resourceLocked(queue.name);
  }
}

function info(queue: MemoryQueue): WireQueueInfo {
  return { queue: queue.name, messageCount: queue.messages.length, consumerCount: queue.consumers.length };
}

function assertEquivalent(queue: MemoryQueue, options: WireQueueOptions): void {
  const durable = options.durable ?? true;
  if (durable !== queue.durable) throw preconditionFailed(`inequivalent arg 'durable' for queue '${queue.name}' in vhost '/': received '${String(durable)}' but current is '${String(queue.durable)}'`);
  const current = queue.options.arguments ?? {};
  const received = options.arguments ?? {};
  for (const key of compared) {
    if (current[key] !== received[key]) {
      throw preconditionFailed(`inequivalent arg '${key}' for queue '${queue.name}' in vhost '/': received ${describe(received[key])} but current is ${describe(current[key])}`);
    }
  }
}

function describe(value: unknown): string {
  return value === undefined ? 'none' : `the value '${String(value)}'`;
}

/** The x-death list (newest first, one entry per queue and reason, counted) and x-first-death-* headers RabbitMQ adds. */
function deathHeaders(msg: StoredMessage, queue: string, reason: DeathReason): WireHeaders {
  const headers = cloneTable(msg.properties.headers ?? {});
  const deaths = Array.isArray(headers['x-death']) ? (headers['x-death'] as unknown[]).filter((d): d is WireHeaders => typeof d === 'object' && d !== null) : [];
  const i = deaths.findIndex((d) => d['queue'] === queue && d['reason'] === reason);
  const previous = i >= 0 ? deaths.splice(i, 1)[0] : undefined;
  const count = typeof previous?.['count'] === 'number' ? previous['count'] + 1 : 1;
  const entry: WireHeaders = {
    count,
    reason,
    queue,
    // amqplib reads an AMQP timestamp (seconds) as this shape.
    time: { '!': 'timestamp', value: Math.floor(Date.now() / 1000) },
    exchange: msg.exchange,
    'routing-keys': [msg.routingKey],
    ...(msg.properties.expiration === undefined ? {} : { 'original-expiration': msg.properties.expiration }),
  };
  headers['x-death'] = [entry, ...deaths];
  if (headers['x-first-death-reason'] === undefined) {
    headers['x-first-death-reason'] = reason;
    headers['x-first-death-queue'] = queue;
    headers['x-first-death-exchange'] = msg.exchange;
  }
  return headers;
}
