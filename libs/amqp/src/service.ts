import type { Channel, ChannelModel, ConsumeMessage } from 'amqplib';
import {
  CancelledError, DeadlineExceededError, Dispatcher, ErrorCode, JsonRpcError, ShuttingDownError, decode, definedOnly, encodeResponse,
  errorResponse, resolveDecodeLimits, type Decoded, type NotificationMessage, type RequestMessage, type ResolvedDecodeLimits,
  type ResponseMessage,
} from '@warren/jsonrpc';
import type { Logger } from '@warren/logger';
import { RpcClient } from './client';
import { closeChannel } from './close';
import type { AmqpConnection } from './connection';
import { CallAbort } from './call-abort';
import { CallContext, type ContextOwner, type HandlerContext } from './context';
import { readDelivery, type DeliveryInfo } from './delivery';
import { Header } from './headers';
import { names, type Names } from './names';
import { resolveServiceOptions, type ResolvedServiceOptions, type ServiceOptions } from './service-options';
import { emptyStats, type ServiceStats } from './service-stats';
import { applyTopology, coreTopology, serviceTopology } from './topology';
import type { TrackDecision, TrackedCall } from './tracker';
import type { Announcement } from './announcement';
import { CancelReceiver } from './wire-cancel';

type ServiceState = 'starting' | 'running' | 'draining' | 'closed';

/** Sentinel a race returns when the call's signal fired first. */
const aborted = Symbol('aborted');

/**
 * A running service: consumes its request queue (shared by all instances),
 * its event queues, answers on each caller's reply queue, and acks only after
 * the reply is published.
 */
export class WarrenService {
  private readonly o: ResolvedServiceOptions;
  private readonly n: Names;
  private readonly log: Logger;
  private readonly limits: ResolvedDecodeLimits;
  private readonly dispatcher: Dispatcher<HandlerContext>;
  /** The abort of each call running now, by its delivery: shutdown aborts what outlives the grace period. */
  private readonly running = new Map<ConsumeMessage, CallAbort>();
  /** Cancels heard on the wire (NS.cancel), from any language. */
  private readonly cancels: CancelReceiver;
  private channel: Channel | undefined;
  private consumerTags: string[] = [];
  private state: ServiceState = 'starting';
  private closing: Promise<void> | undefined;
  private unregister: (() => void) | undefined;
  private readonly counters: ServiceStats = emptyStats();
  private announceTimer: NodeJS.Timeout | undefined;
  private readonly startedAt = Date.now();
  /** The client handlers use for nested calls (shares this service's connection). */
  client!: RpcClient;
  /** What every handler context of this service shares. */
  private owner!: ContextOwner;

  private constructor(private readonly connection: AmqpConnection, options: ServiceOptions, private readonly ownsConnection: boolean) {
    this.o = resolveServiceOptions(options);
    this.n = names(this.o.namespace);
    this.log = this.o.logger.child({ component: 'service', service: this.o.name, instanceId: this.o.instanceId });
    this.limits = resolveDecodeLimits(this.o.decodeLimits);
    this.cancels = new CancelReceiver(() => this.running.entries(), this.log);
    this.dispatcher = new Dispatcher<HandlerContext>({
      exposeErrorStack: this.o.exposeErrorStack,
      onNotificationError: (err, call) => this.log.warn({ err, method: call.method }, 'notification handler failed'),
    });
    for (const mw of this.o.middleware) this.dispatcher.use(mw);
    for (const [name, def] of Object.entries(this.o.methods)) this.dispatcher.method(name, def);
    for (const [name, def] of Object.entries(this.o.reservedMethods)) this.dispatcher.method(name, def, { reserved: true });
    for (const [name, def] of Object.entries({ ...this.o.notifications, ...this.o.instanceNotifications })) this.dispatcher.notification(name, def);
  }

  /** Starts consuming on `connection`; `ownsConnection` makes `close()` close it too. */
  static async start(connection: AmqpConnection, options: ServiceOptions, ownsConnection = false): Promise<WarrenService> {
    const service = new WarrenService(connection, options, ownsConnection);
    service.client = await RpcClient.create(connection, { ...service.o.client, namespace: service.o.namespace, logger: service.o.logger });
    service.owner = { service: service.o.name, instanceId: service.o.instanceId, log: service.log, client: service.client };
    await service.o.tracker?.start?.({ service: service.o.name, instanceId: service.o.instanceId, running: () => service.running.size });
    // Operators see a degraded tracker at once (the broker's /services and metrics), not at the next interval.
    service.o.tracker?.onReportChange?.(() => service.announce());
    service.unregister = await connection.onOpen((model) => service.setup(model));
    service.state = 'running';
    service.announceTimer = setInterval(() => service.announce(), service.o.announceIntervalMs);
    service.announceTimer.unref();
    service.log.info({ methods: service.dispatcher.methodNames, prefetch: service.o.prefetch }, 'service started');
    return service;
  }

  get name(): string {
    return this.o.name;
  }

  get instanceId(): string {
    return this.o.instanceId;
  }

  get options(): ResolvedServiceOptions {
    return this.o;
  }

  stats(): Readonly<ServiceStats> {
    return { ...this.counters, running: this.running.size };
  }

  /**
   * Graceful shutdown: stop taking work, let running handlers finish within
   * `shutdownGraceMs`, abort and requeue what is left, then close channels and
   * (if owned) the connection. Idempotent.
   */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.state = 'draining';
      clearInterval(this.announceTimer);
      this.publishControl({ type: 'withdraw', service: this.o.name, instanceId: this.o.instanceId });
      const ch = this.channel;
      for (const tag of this.consumerTags.splice(0)) await ch?.cancel(tag).catch(() => undefined);
      await this.waitForRunning(this.o.shutdownGraceMs);
      if (this.running.size > 0) {
        this.log.warn({ running: this.running.size }, 'grace period over; aborting and requeueing running calls');
        for (const abort of this.running.values()) abort.abort(new ShuttingDownError());
        await this.waitForRunning(1000);
      }
      this.unregister?.();
      await this.client.close();
      await this.o.tracker?.stop?.();
      this.channel = undefined;
      if (ch) await closeChannel(ch);
      if (this.ownsConnection) await this.connection.close();
      this.state = 'closed';
      this.log.info('service closed');
    })();
    return this.closing;
  }

  private async setup(model: ChannelModel): Promise<void> {
    if (this.state === 'draining' || this.state === 'closed') return;
    const ch = await model.createChannel();
    ch.on('error', (err: Error) => this.log.warn({ err }, 'service channel error'));
    ch.on('close', () => {
      if (this.channel !== ch) return;
      this.channel = undefined;
      const current = this.connection.model;
      if (current && this.state === 'running') this.setup(current).catch((err: unknown) => this.log.error({ err }, 'service channel rebuild failed'));
    });
    await applyTopology(ch, coreTopology(this.n));
    await applyTopology(ch, serviceTopology(this.n, {
      service: this.o.name,
      instanceId: this.o.instanceId,
      methods: this.dispatcher.methodNames,
      notifications: Object.keys(this.o.notifications),
      instanceNotifications: Object.keys(this.o.instanceNotifications),
      queueType: this.o.queueType,
      durable: this.o.durable,
      deadLetterMax: this.o.deadLetterMax,
    }));
    this.channel = ch;
    await this.cancels.listen(ch, this.n, this.o.name, this.o.instanceId);
    const tags: string[] = [];
    // prefetch with global=false applies to each consumer started after it.
    await ch.prefetch(this.o.prefetch, false);
    if (this.dispatcher.methodNames.length > 0) {
      tags.push((await ch.consume(this.n.serviceQueue(this.o.name), (msg) => this.onDelivery(ch, msg, 'request'))).consumerTag);
    }
    if (Object.keys(this.o.notifications).length > 0) {
      tags.push((await ch.consume(this.n.serviceEventQueue(this.o.name), (msg) => this.onDelivery(ch, msg, 'event'))).consumerTag);
    }
    if (Object.keys(this.o.instanceNotifications).length > 0) {
      tags.push((await ch.consume(this.n.instanceEventQueue(this.o.name, this.o.instanceId), (msg) => this.onDelivery(ch, msg, 'event'))).consumerTag);
    }
    this.consumerTags = tags;
    this.announce();
  }

  /** What this instance announces for discovery. */
  describe(): Extract<Announcement, { type: 'announce' }> {
    return {
      type: 'announce',
      service: this.o.name,
      instanceId: this.o.instanceId,
      startedAt: this.startedAt,
      intervalMs: this.o.announceIntervalMs,
      methods: Object.entries(this.o.methods).map(([name, m]) => ({
        name,
        ...(m.description === undefined ? {} : { description: m.description }),
        ...(m.params === undefined ? {} : { params: m.params }),
        ...(m.result === undefined ? {} : { result: m.result }),
        ...(m.tool === undefined ? {} : { tool: m.tool }),
      })),
      notifications: Object.keys(this.o.notifications),
      instanceNotifications: Object.keys(this.o.instanceNotifications),
      metadata: this.o.metadata,
      running: this.running.size,
      ...(this.o.tracker?.report ? { tracking: this.o.tracker.report() } : {}),
    };
  }

  private announce(): void {
    if (this.state === 'running' || this.state === 'starting') this.publishControl(this.describe());
  }

  private publishControl(message: Announcement): void {
    try {
      this.channel?.publish(this.n.controlExchange, '', Buffer.from(JSON.stringify(message)), { contentType: 'application/json', expiration: String(this.o.announceIntervalMs * 3) });
    } catch (err) {
      this.log.debug({ err }, 'announcement not published');
    }
  }

  private onDelivery(ch: Channel, msg: ConsumeMessage | null, kind: 'request' | 'event'): void {
    if (msg === null) {
      // The broker cancelled our consumer (queue deleted): rebuild the channel, which re-declares the queue.
      this.log.warn({ kind }, 'consumer cancelled by the broker');
      void ch.close().catch(() => undefined);
      return;
    }
    const work = kind === 'request' ? this.handleRequest(ch, msg) : this.handleEvent(ch, msg);
    work.catch((err: unknown) => {
      this.log.error({ err }, 'delivery handling failed');
      this.settle(ch, msg, 'dead-letter');
    });
  }

  private async handleRequest(ch: Channel, msg: ConsumeMessage): Promise<void> {
    const info = readDelivery(msg, this.o.defaultTimeoutMs);
    const startedAt = Date.now();
    if (info.deadline <= startedAt) {
      // Nobody waits for this answer any more; running it now would be work done for nothing. The answer is for a
      // caller whose deadline was wrong (in seconds, say), so its mistake is not a silent wait.
      this.counters.expired++;
      const late = info.replyTo ? expiredResponse(decode(msg.content, this.limits)) : undefined;
      if (late) this.reply(info, late);
      this.settle(ch, msg, 'ack');
      return;
    }
    const decoded = decode(msg.content, this.limits);
    const unservable = this.cancels.cancelledBeforeStart(info.callId) ? cancelledResponse(decoded) : unservableResponse(decoded);
    if (unservable) {
      if (info.replyTo) this.reply(info, unservable);
      const cancelled = 'error' in unservable && unservable.error.code === ErrorCode.Cancelled;
      if (cancelled) this.counters.answered++;
      else this.counters.deadLettered++;
      this.settle(ch, msg, cancelled ? 'ack' : 'dead-letter');
      return;
    }
    const abort = new CallAbort();
    this.running.set(msg, abort);
    // Clamped: setTimeout fires at once for delays past 2^31-1 ms, and the header is the caller's to set.
    const timer = setTimeout(() => abort.abort(new DeadlineExceededError()), Math.min(info.deadline - startedAt, 2 ** 31 - 1));
    try {
      const single = decoded.kind === 'single' && decoded.item.kind === 'request' ? decoded.item.message : undefined;
      const tracked: TrackedCall | undefined = single && this.o.tracker ? { callId: info.callId, id: single.id, method: single.method, service: this.o.name, instanceId: this.o.instanceId, attempt: info.attempt, deadline: info.deadline, startedAt } : undefined;
      const decision = tracked ? await this.begin(tracked, abort) : undefined;
      if (decision && decision.action !== 'run') {
        if (info.replyTo) this.reply(info, decision.response);
        this.counters.answeredFromStore++;
        this.settle(ch, msg, decision.action === 'dead-letter' ? 'dead-letter' : 'ack');
        if (decision.action === 'dead-letter') this.counters.deadLettered++;
        return;
      }
      const attempt = decision?.action === 'run' ? decision.attempt : info.attempt;
      try {
        // A call aborted before its handler started (cancelled or timed out while the tracker decided) never starts.
        const work = abort.aborted ? aborted : single ? this.dispatcher.respond(single, this.context(single, info, attempt, abort)) : this.dispatcher.handle(decoded, (m) => this.context(m, info, attempt, abort));
        const outcome = work instanceof Promise ? await abort.race(work, aborted) : work;
        const response = outcome === aborted ? abortedResponse(abort.reason, single) : outcome;
        if (response === 'requeue') {
          this.settle(ch, msg, 'requeue');
          return;
        }
        // Serialized once: the tracker stores the very text the caller receives.
        const text = response ? encodeResponse(response) : undefined;
        if (tracked && text !== undefined && response && !Array.isArray(response)) await this.o.tracker?.finish(tracked, response, text).catch((err: unknown) => this.log.warn({ err }, 'tracker finish failed'));
        if (text !== undefined && info.replyTo) this.reply(info, text);
        this.counters.answered++;
        this.settle(ch, msg, 'ack');
      } finally {
        if (decision?.action === 'run') decision.release();
      }
    } finally {
      clearTimeout(timer);
      this.running.delete(msg);
    }
  }

  private async begin(call: TrackedCall, abort: CallAbort): Promise<TrackDecision | undefined> {
    try {
      return await this.o.tracker?.begin(call, abort);
    } catch (err) {
      // Tracking is an aid, not a gate: a failing store lets the call run untracked.
      this.log.debug({ err }, 'tracker unavailable; running untracked');
      return undefined;
    }
  }

  private async handleEvent(ch: Channel, msg: ConsumeMessage): Promise<void> {
    const info = readDelivery(msg, this.o.defaultTimeoutMs);
    const decoded = decode(msg.content, this.limits);
    const messages = notificationsIn(decoded);
    if (messages.length === 0) this.log.warn({ callId: info.callId }, 'event queue received something that is not a notification; dropped');
    const abort = new CallAbort();
    this.running.set(msg, abort);
    try {
      for (const message of messages) {
        await this.dispatcher.handleNotification(message, this.context(message, info, info.attempt, abort));
        this.counters.notified++;
      }
      this.settle(ch, msg, 'ack');
    } finally {
      this.running.delete(msg);
    }
  }

  private context(message: RequestMessage | NotificationMessage, info: DeliveryInfo, attempt: number, abort: CallAbort): HandlerContext {
    const facts = { callId: info.callId, method: message.method, id: 'id' in message ? message.id : undefined, deadline: info.deadline, attempt, parentTrace: info.traceparent };
    return new CallContext(facts, abort, this.owner);
  }

  /** Publishes a response (or its text, already serialized) to the caller's reply queue. */
  private reply(info: DeliveryInfo, response: ResponseMessage | ResponseMessage[] | string): void {
    const ch = this.channel;
    if (!ch || !info.replyTo) return;
    try {
      // The default exchange drops a reply to a vanished queue quietly; it never closes the channel.
      ch.publish('', info.replyTo, Buffer.from(typeof response === 'string' ? response : encodeResponse(response)), { correlationId: info.callId, contentType: 'application/json' });
    } catch (err) {
      this.log.warn({ err, callId: info.callId }, 'reply publish failed');
    }
  }

  /** Acks or rejects on the channel the message came on; a dead channel means RabbitMQ will redeliver it. */
  private settle(ch: Channel, msg: ConsumeMessage, action: 'ack' | 'dead-letter' | 'requeue'): void {
    if (this.channel !== ch) return;
    try {
      if (action === 'dead-letter' && forgedDeathHeader(msg)) this.forwardDeadLetter(ch, msg);
      else if (action === 'ack') ch.ack(msg);
      else ch.nack(msg, false, action === 'requeue');
    } catch (err) {
      this.log.debug({ err }, 'settle on a closing channel');
    }
  }

  /**
   * Dead-letters by hand: a copy without `x-death` to the dead-letter exchange, then an ack (in that order on one
   * channel, so a crash in between redelivers rather than loses it). For messages RabbitMQ cannot dead-letter itself.
   */
  private forwardDeadLetter(ch: Channel, msg: ConsumeMessage): void {
    const { headers, userId: _userId, ...properties } = msg.properties as ConsumeMessage['properties'] & { userId?: unknown };
    const { [Header.death]: _forged, ...kept } = (headers ?? {}) as Record<string, unknown>;
    try {
      ch.publish(this.n.deadLetterExchange, this.o.name, msg.content, { ...definedOnly(properties), headers: kept });
    } catch (err) {
      this.log.warn({ err }, 'dead letter not forwarded');
    }
    this.log.warn({ callId: msg.properties.correlationId as unknown }, 'message with a malformed x-death header dead-lettered by hand');
    ch.ack(msg);
  }

  private async waitForRunning(ms: number): Promise<void> {
    const until = Date.now() + ms;
    while (this.running.size > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
  }
}

/**
 * RabbitMQ 3.10 crashes the queue process (losing transient messages in it) when it dead-letters a message whose
 * x-death header is a list holding anything but tables, and any publisher can set that header. Such a message is
 * dead-lettered by the service itself instead.
 */
function forgedDeathHeader(msg: ConsumeMessage): boolean {
  const value = (msg.properties.headers as Record<string, unknown> | undefined)?.[Header.death];
  return Array.isArray(value) && value.some((e) => typeof e !== 'object' || e === null || Array.isArray(e) || Buffer.isBuffer(e));
}


/** The answer for a message no handler can take: parse errors, invalid requests, stray responses. */
function unservableResponse(decoded: Decoded): ResponseMessage | undefined {
  if (decoded.kind === 'rejected') return decoded.response;
  if (decoded.kind === 'single' && decoded.item.kind === 'invalid') return decoded.item.response;
  if (decoded.kind === 'single' && decoded.item.kind === 'response') return errorResponse(decoded.item.message.id, ErrorCode.InvalidRequest);
  return undefined;
}

/** The answer to a request whose deadline had passed when it was taken. */
function expiredResponse(decoded: Decoded): ResponseMessage | undefined {
  if (decoded.kind !== 'single' || decoded.item.kind !== 'request') return undefined;
  return { jsonrpc: '2.0', error: new DeadlineExceededError(undefined, { reason: 'deadline_passed' }).toErrorObject(), id: decoded.item.message.id };
}

/** The answer to a request cancelled before it arrived (the call's id when it has one). */
function cancelledResponse(decoded: Decoded): ResponseMessage {
  const id = decoded.kind === 'single' && decoded.item.kind === 'request' ? decoded.item.message.id : null;
  return { jsonrpc: '2.0', error: new CancelledError(undefined, { reason: 'cancelled' }).toErrorObject(), id };
}

function notificationsIn(decoded: Decoded): NotificationMessage[] {
  const items = decoded.kind === 'single' ? [decoded.item] : decoded.kind === 'batch' ? decoded.items : [];
  return items.flatMap((i) => (i.kind === 'notification' ? [i.message] : []));
}

/** What to do when a call's signal fired before its handler finished. */
function abortedResponse(reason: unknown, single: RequestMessage | undefined): ResponseMessage | 'requeue' | null {
  if (reason instanceof ShuttingDownError) return 'requeue';
  const error = reason instanceof JsonRpcError ? reason : new CancelledError();
  return single ? { jsonrpc: '2.0', error: error.toErrorObject(), id: single.id } : null;
}
