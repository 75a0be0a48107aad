import type { WireChannel, WireExchangeOptions, WireQueueOptions } from '../transport/contract';
import type { Names } from './names';

export interface ExchangeDecl {
  readonly name: string;
  readonly type: 'direct' | 'fanout' | 'topic';
  readonly options: WireExchangeOptions;
}
export interface QueueDecl {
  readonly name: string;
  readonly options: WireQueueOptions;
}
export interface BindingDecl {
  readonly queue: string;
  readonly exchange: string;
  readonly routingKey: string;
}

/** Exchanges, queues and bindings as data: declared from here, and declared again after every reconnect. */
export interface Topology {
  readonly exchanges: readonly ExchangeDecl[];
  readonly queues: readonly QueueDecl[];
  readonly bindings: readonly BindingDecl[];
}

export type QueueType = 'classic' | 'quorum';

/** The exchanges every Warren participant relies on. Durable, so they outlive everyone who declared them. */
export function coreTopology(n: Names): Topology {
  return {
    exchanges: [
      { name: n.requestExchange, type: 'direct', options: { durable: true } },
      { name: n.eventExchange, type: 'direct', options: { durable: true } },
      { name: n.deadLetterExchange, type: 'direct', options: { durable: true } },
      { name: n.controlExchange, type: 'fanout', options: { durable: true } },
      { name: n.discoverExchange, type: 'fanout', options: { durable: true } },
      { name: n.cancelExchange, type: 'fanout', options: { durable: true } },
    ],
    queues: [],
    bindings: [],
  };
}

export interface ServiceTopologyInput {
  readonly service: string;
  readonly instanceId: string;
  readonly methods: readonly string[];
  readonly notifications: readonly string[];
  readonly instanceNotifications: readonly string[];
  readonly queueType: QueueType;
  /** Durable queue (survives a broker restart); quorum queues are always durable. */
  readonly durable: boolean;
  /** Most messages kept in the dead-letter queue; older ones are dropped first. */
  readonly deadLetterMax: number;
  /** Quorum request queues: deliveries of one request before RabbitMQ dead-letters it (`x-delivery-limit`). */
  readonly deliveryLimit?: number;
  /** The waits of the methods' retry policies (retry.ts `retryDelays`): one delay queue each. @default [] */
  readonly retryDelaysMs?: readonly number[];
}

/**
 * A service's queues: one shared request queue (competing consumers), one
 * shared event queue (one copy per service), an optional per-instance event
 * queue (one copy per instance), a bounded dead-letter queue, and the
 * instance's control queue (announce-now requests).
 */
export function serviceTopology(n: Names, s: ServiceTopologyInput): Topology {
  const requestQueue = n.serviceQueue(s.service);
  const deadQueue = n.deadLetterQueue(s.service);
  const durable = s.queueType === 'quorum' || s.durable;
  const typeArgs = { 'x-queue-type': s.queueType };
  const queues: QueueDecl[] = [
    {
      name: requestQueue,
      options: {
        durable,
        arguments: { ...typeArgs, ...deliveryLimitArgs(s), 'x-dead-letter-exchange': n.deadLetterExchange, 'x-dead-letter-routing-key': s.service },
      },
    },
    { name: deadQueue, options: { durable, arguments: { ...typeArgs, 'x-max-length': s.deadLetterMax } } },
  ];
  const bindings: BindingDecl[] = [
    ...s.methods.map((m) => ({ queue: requestQueue, exchange: n.requestExchange, routingKey: m })),
    { queue: deadQueue, exchange: n.deadLetterExchange, routingKey: s.service },
  ];
  // Delay queues: a retried request waits out the TTL, then RabbitMQ dead-letters it (default exchange) back to the request queue.
  for (const ms of s.retryDelaysMs ?? []) {
    queues.push({ name: n.retryQueue(s.service, ms), options: { durable, arguments: { ...typeArgs, 'x-message-ttl': ms, 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': requestQueue } } });
  }
  if (s.notifications.length > 0) {
    const q = n.serviceEventQueue(s.service);
    queues.push({ name: q, options: { durable, arguments: typeArgs } });
    bindings.push(...s.notifications.map((m) => ({ queue: q, exchange: n.eventExchange, routingKey: m })));
  }
  if (s.instanceNotifications.length > 0) {
    const q = n.instanceEventQueue(s.service, s.instanceId);
    // Exclusive and auto-deleted: an instance's private copy goes away with the instance.
    queues.push({ name: q, options: { exclusive: true, autoDelete: true, durable: false } });
    bindings.push(...s.instanceNotifications.map((m) => ({ queue: q, exchange: n.eventExchange, routingKey: m })));
  }
  queues.push(instanceControlQueue(n, s));
  bindings.push({ queue: n.instanceControlQueue(s.service, s.instanceId), exchange: n.discoverExchange, routingKey: '' });
  return { exchanges: [], queues, bindings };
}

/** The poison guard of a quorum request queue; classic queues have no delivery count. */
function deliveryLimitArgs(s: ServiceTopologyInput): Record<string, number> {
  return s.queueType === 'quorum' && s.deliveryLimit !== undefined ? { 'x-delivery-limit': s.deliveryLimit } : {};
}

/** Exclusive and auto-deleted like the instance event queue; bounded, since what it carries is only ever a hint. */
function instanceControlQueue(n: Names, s: ServiceTopologyInput): QueueDecl {
  return { name: n.instanceControlQueue(s.service, s.instanceId), options: { exclusive: true, autoDelete: true, durable: false, arguments: { 'x-max-length': 100 } } };
}

/** Declares a topology on a channel. Re-declaring an identical object is a no-op for RabbitMQ. */
export async function applyTopology(channel: WireChannel, topology: Topology): Promise<void> {
  for (const e of topology.exchanges) await channel.assertExchange(e.name, e.type, e.options);
  for (const q of topology.queues) await channel.assertQueue(q.name, q.options);
  for (const b of topology.bindings) await channel.bindQueue(b.queue, b.exchange, b.routingKey);
}
