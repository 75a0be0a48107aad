import type { WireChannel, WireExchangeOptions, WireQueueOptions } from '@warren/amqp-transport';
import type { Names } from './names';

export interface ExchangeDecl {
  readonly name: string;
  readonly type: 'direct' | 'fanout' | 'topic' | 'headers';
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
  /** A headers exchange's match (`x-match` and the wanted header values). @default none */
  readonly arguments?: Record<string, unknown>;
}
/** An exchange-to-exchange binding: what `source` routes goes on through `destination`. */
export interface ExchangeBindingDecl {
  readonly destination: string;
  readonly source: string;
  readonly routingKey: string;
  readonly arguments?: Record<string, unknown>;
}

/** Exchanges, queues and bindings as data: declared from here, and declared again after every reconnect. */
export interface Topology {
  readonly exchanges: readonly ExchangeDecl[];
  readonly queues: readonly QueueDecl[];
  readonly bindings: readonly BindingDecl[];
  /** Exchange-to-exchange bindings, declared after the queue bindings. @default none */
  readonly exchangeBindings?: readonly ExchangeBindingDecl[];
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
  /**
   * false: a temporary service. Its request and event queues are still declared durable (RabbitMQ 4.3
   * refuses queues that are neither durable nor exclusive) but with `x-expires: transientExpiresMs`, so
   * they go once no instance has consumed them for that long; its requests are not published persistent.
   * Quorum queues ignore it (always durable, no expiry).
   */
  readonly durable: boolean;
  /** `x-expires` of a temporary (`durable: false`) classic service's request and event queues. @default 3600000 */
  readonly transientExpiresMs?: number;
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
  // Every shared queue is durable: RabbitMQ 4.3 refuses queues that are neither durable nor exclusive.
  const durable = true;
  const typeArgs = { 'x-queue-type': s.queueType };
  // A temporary service's consumed queues expire once unused; the dead-letter and delay queues have no
  // consumer (x-expires would delete them while the service runs), so they never expire.
  const expiry = s.queueType === 'classic' && !s.durable ? { 'x-expires': s.transientExpiresMs ?? defaultTransientExpiresMs } : {};
  const queues: QueueDecl[] = [
    {
      name: requestQueue,
      options: {
        durable,
        arguments: { ...typeArgs, ...expiry, ...deliveryLimitArgs(s), 'x-dead-letter-exchange': n.deadLetterExchange, 'x-dead-letter-routing-key': s.service },
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
    queues.push({ name: q, options: { durable, arguments: { ...typeArgs, ...expiry } } });
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

/** How long a temporary service's queues outlive their last consumer. */
export const defaultTransientExpiresMs = 3_600_000;

/**
 * A named reply queue: durable with `x-expires` (RabbitMQ's advice for a temporary shared queue; 4.3
 * refuses non-durable non-exclusive ones). Not exclusive, so replies published while the client
 * reconnects wait for it; not auto-deleted, so a consumer cancel does not lose it; it goes by itself
 * `expiresMs` after its client stopped consuming.
 */
export function replyQueueOptions(expiresMs: number): WireQueueOptions {
  return { durable: true, exclusive: false, autoDelete: false, arguments: { 'x-expires': expiresMs } };
}

/**
 * The poison guard of a quorum request queue; classic queues have no delivery count. Only when
 * `deliveryLimit` is set: adding the argument to an existing queue is a 406 PRECONDITION_FAILED on
 * redeclare (measured on 3.10), so an unset limit leaves RabbitMQ's own (none on 3.x, 20 on 4.0+).
 */
function deliveryLimitArgs(s: ServiceTopologyInput): Record<string, number> {
  return s.queueType === 'quorum' && s.deliveryLimit !== undefined ? { 'x-delivery-limit': s.deliveryLimit } : {};
}

/**
 * An instance's control queue, bound to `NS.discover`, with the exchanges it needs: consumed on a channel of its
 * own, so the instance answers announce-now and worker controls even while its request queue cannot be declared.
 */
export function instanceControlTopology(n: Names, service: string, instanceId: string): Topology {
  const queue = instanceControlQueue(n, { service, instanceId });
  return { exchanges: coreTopology(n).exchanges, queues: [queue], bindings: [{ queue: queue.name, exchange: n.discoverExchange, routingKey: '' }] };
}

/** Exclusive and auto-deleted like the instance event queue; bounded, since what it carries is only ever a hint. */
function instanceControlQueue(n: Names, s: Pick<ServiceTopologyInput, 'service' | 'instanceId'>): QueueDecl {
  return { name: n.instanceControlQueue(s.service, s.instanceId), options: { exclusive: true, autoDelete: true, durable: false, arguments: { 'x-max-length': 100 } } };
}

/** Declares a topology on a channel. Re-declaring an identical object is a no-op for RabbitMQ. */
export async function applyTopology(channel: WireChannel, topology: Topology): Promise<void> {
  for (const e of topology.exchanges) await channel.assertExchange(e.name, e.type, e.options);
  for (const q of topology.queues) await channel.assertQueue(q.name, q.options);
  for (const b of topology.bindings) await (b.arguments === undefined ? channel.bindQueue(b.queue, b.exchange, b.routingKey) : channel.bindQueue(b.queue, b.exchange, b.routingKey, b.arguments));
  for (const b of topology.exchangeBindings ?? []) await channel.bindExchange(b.destination, b.source, b.routingKey, b.arguments);
}
