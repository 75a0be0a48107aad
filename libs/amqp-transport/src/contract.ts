/**
 * Warren's own view of AMQP: the part of amqplib's API that the engine, the
 * service runtime, discovery and jobs use, and nothing else. These are
 * structural subsets of amqplib's types, so amqplib's ChannelModel and Channel
 * are WireModel and WireChannel as they are: no wrapper, nothing added to the
 * hot path. MemoryBroker (./memory) is the other implementation.
 *
 * Listener registrations return `unknown` rather than `this`, so both
 * amqplib's emitters and plain EventEmitters fit.
 */

/** Header table of a message. Values are what AMQP field tables carry: strings, numbers, booleans, tables, arrays. */
export type WireHeaders = Record<string, unknown>;

/** The properties of a received message; every key is present, undefined when not set (as amqplib gives them). */
export interface WireProperties {
  readonly contentType: string | undefined;
  readonly contentEncoding: string | undefined;
  readonly headers: WireHeaders | undefined;
  readonly deliveryMode: number | undefined;
  readonly priority: number | undefined;
  readonly correlationId: string | undefined;
  readonly replyTo: string | undefined;
  readonly expiration: string | undefined;
  readonly messageId: string | undefined;
  readonly timestamp: number | undefined;
  readonly type: string | undefined;
  readonly userId: string | undefined;
  readonly appId: string | undefined;
  readonly clusterId: string | undefined;
}

export interface WireFields {
  readonly deliveryTag: number;
  readonly redelivered: boolean;
  readonly exchange: string;
  readonly routingKey: string;
}

/** A delivery to a consumer. */
export interface WireMessage {
  readonly content: Buffer;
  readonly fields: WireFields & { readonly consumerTag: string };
  readonly properties: WireProperties;
}

/** A message fetched with basic.get; `messageCount` is what is left in the queue. */
export interface WireGetMessage {
  readonly content: Buffer;
  readonly fields: WireFields & { readonly messageCount: number };
  readonly properties: WireProperties;
}

/** A mandatory publish no queue took, handed back on the channel's 'return' event. */
export interface WireReturned {
  readonly content: Buffer;
  readonly fields: { readonly exchange: string; readonly routingKey: string; readonly replyCode?: number; readonly replyText?: string };
  readonly properties: WireProperties;
}

/** What a message to ack/nack/reject must carry: its delivery tag. */
export interface WireDelivered {
  readonly fields: { readonly deliveryTag: number };
}

export interface WirePublishOptions {
  /** Per-message TTL in ms (AMQP sends it as a string). */
  readonly expiration?: string | number;
  readonly mandatory?: boolean;
  readonly persistent?: boolean;
  readonly deliveryMode?: boolean | number;
  readonly contentType?: string;
  readonly contentEncoding?: string;
  readonly headers?: WireHeaders;
  readonly priority?: number;
  readonly correlationId?: string;
  readonly replyTo?: string;
  readonly messageId?: string;
  readonly timestamp?: number;
  readonly type?: string;
  /** Must be the publisher's own RabbitMQ user (RabbitMQ refuses any other, 406): consumers can trust it. */
  readonly userId?: string | undefined;
  readonly appId?: string;
}

export interface WireQueueOptions {
  readonly exclusive?: boolean;
  readonly durable?: boolean;
  readonly autoDelete?: boolean;
  /** x-expires, x-message-ttl, x-dead-letter-exchange, x-dead-letter-routing-key, x-max-length, x-queue-type, ... */
  readonly arguments?: Record<string, unknown>;
}

export interface WireExchangeOptions {
  readonly durable?: boolean;
  readonly autoDelete?: boolean;
  readonly internal?: boolean;
  readonly arguments?: Record<string, unknown>;
}

export interface WireConsumeOptions {
  readonly consumerTag?: string;
  readonly noAck?: boolean;
  readonly exclusive?: boolean;
}

export type WireExchangeType = 'direct' | 'topic' | 'fanout' | 'headers';

export interface WireQueueInfo {
  readonly queue: string;
  readonly messageCount: number;
  readonly consumerCount: number;
}

/** An AMQP channel. Errors the broker answers with (404, 406, ...) close it, as on RabbitMQ. */
export interface WireChannel {
  assertExchange(exchange: string, type: WireExchangeType, options?: WireExchangeOptions): Promise<{ exchange: string }>;
  assertQueue(queue: string, options?: WireQueueOptions): Promise<WireQueueInfo>;
  /** Passive declare: a missing queue fails with 404 and closes the channel. */
  checkQueue(queue: string): Promise<WireQueueInfo>;
  deleteQueue(queue: string): Promise<{ messageCount: number }>;
  purgeQueue(queue: string): Promise<{ messageCount: number }>;
  /** `args`: a headers exchange's match (`x-match` and the header values). */
  bindQueue(queue: string, exchange: string, pattern: string, args?: Record<string, unknown>): Promise<object>;
  /** An exchange-to-exchange binding: what `source` routes with `pattern` (or `args`) goes on through `destination`. */
  bindExchange(destination: string, source: string, pattern: string, args?: Record<string, unknown>): Promise<object>;
  publish(exchange: string, routingKey: string, content: Buffer, options?: WirePublishOptions): boolean;
  consume(queue: string, onMessage: (msg: WireMessage | null) => void, options?: WireConsumeOptions): Promise<{ consumerTag: string }>;
  cancel(consumerTag: string): Promise<{ consumerTag: string }>;
  get(queue: string, options?: { noAck?: boolean }): Promise<WireGetMessage | false>;
  ack(message: WireDelivered, allUpTo?: boolean): void;
  nack(message: WireDelivered, allUpTo?: boolean, requeue?: boolean): void;
  reject(message: WireDelivered, requeue?: boolean): void;
  prefetch(count: number, global?: boolean): Promise<object>;
  close(): Promise<void>;
  on(event: 'close', listener: () => void): unknown;
  on(event: 'error', listener: (err: Error) => void): unknown;
  on(event: 'return', listener: (msg: WireReturned) => void): unknown;
  once(event: 'close', listener: () => void): unknown;
  off(event: 'close', listener: () => void): unknown;
  removeAllListeners(event?: string): unknown;
}

/** A channel in confirm mode: the broker acknowledges every publish. */
export interface WireConfirmChannel extends WireChannel {
  /** `callback` gets an error when the broker nacked the publish or the channel closed before it confirmed it. */
  publish(exchange: string, routingKey: string, content: Buffer, options?: WirePublishOptions, callback?: (err: unknown) => void): boolean;
  /** Resolves once every publish so far is confirmed; rejects if any was nacked or lost with the channel. */
  waitForConfirms(): Promise<void>;
}

/** One open connection: a channel factory (amqplib's ChannelModel). */
export interface WireModel {
  createChannel(): Promise<WireChannel>;
  createConfirmChannel(): Promise<WireConfirmChannel>;
  close(): Promise<void>;
  on(event: 'close', listener: (err?: Error) => void): unknown;
  once(event: 'close', listener: (err?: Error) => void): unknown;
  off(event: 'close', listener: (err?: Error) => void): unknown;
}

/** Where a connection is in its life. Consume with `switch (state.type)`. */
export type ConnectionState =
  | { readonly type: 'idle' }
  | { readonly type: 'connecting'; readonly attempt: number }
  | { readonly type: 'open'; readonly url: string }
  | { readonly type: 'reconnecting'; readonly attempt: number; readonly delayMs: number; readonly error: Error }
  | { readonly type: 'closing' }
  | { readonly type: 'closed'; readonly error?: Error };

/** Code run on every fresh connection, in registration order: declare topology, open channels, consume. */
export type OnOpen = (model: WireModel) => Promise<void>;

/**
 * A connection that comes back by itself (AmqpConnection, or MemoryBroker's
 * MemoryConnection): owners register `onOpen` setups, re-run on every fresh
 * model, and hear 'lost' when the current model goes.
 */
export interface WireConnection {
  readonly state: ConnectionState;
  /** The open model, or undefined while (re)connecting or closed. */
  readonly model: WireModel | undefined;
  /** Whether it names several nodes (a cluster): services then default to quorum queues. */
  readonly clustered: boolean;
  /** Successful reconnects since start, for metrics. */
  readonly reconnects: number;
  /** Registers a setup and, if the connection is open, runs it now. Returns an unregister function. */
  onOpen(setup: OnOpen): Promise<() => void>;
  close(): Promise<void>;
  on(event: 'lost', listener: (error: Error) => void): unknown;
  on(event: 'open', listener: (model: WireModel) => void): unknown;
  on(event: 'state', listener: (state: ConnectionState) => void): unknown;
  off(event: 'lost', listener: (error: Error) => void): unknown;
  off(event: 'open', listener: (model: WireModel) => void): unknown;
  off(event: 'state', listener: (state: ConnectionState) => void): unknown;
}
