import { hostname } from 'node:os';
import { closeChannel, type WireChannel, type WireModel, type WireMessage, type WireConnection } from '@warren/amqp-transport';
import { CancelledError, Dispatcher, ShuttingDownError, resolveDecodeLimits, type ResolvedDecodeLimits } from '@warren/jsonrpc';
import type { Logger } from '@warren/logger';
import { RpcClient } from '../engine/client';
import type { CallAbort } from './call-abort';
import type { HandlerContext } from './context';
import { DeliverySettlement } from './delivery-settlement';
import { MethodRetries } from './method-retries';
import { handleNotifications } from './notification-delivery';
import { logHandlerError } from './handler-errors';
import { RequestPipeline, type PipelineDeps } from './request-pipeline';
import { names, type Names } from '../wire/names';
import { resolveServiceOptions, type ResolvedServiceOptions, type ServiceOptions } from './service-options';
import { emptyStats, type ServiceStats } from './service-stats';
import { applyTopology, coreTopology, instanceControlTopology, serviceTopology } from '../wire/topology';
import { SuspectLane } from './suspect-lane';
import type { Announcement, AnnounceMessage } from '../discovery/announcement';
import { AnnounceOnRequest } from '../discovery/announce-now';
import { DirectoryRecorder } from '../discovery/directory';
import { explainReturnedRequests, type AnnouncedMethods } from '../discovery/returned-requests';
import { describeInstance } from './describe';
import { CancelReceiver } from '../wire/wire-cancel';
import { Resubscriber } from './resubscribe';
import { parseWorkerControl, type AppliedControl, type WorkerControlMessage, type WorkerReport } from '../wire/worker-control';
import { WorkerControls } from './worker-controls';

type ServiceState = 'starting' | 'running' | 'draining' | 'closed';

/** A running service: consumes its request queue (shared by all instances) and its event queues, answers on each caller's reply queue, and acks only after the reply is published. */
export class WarrenService {
  private readonly o: ResolvedServiceOptions;
  private readonly n: Names;
  private readonly log: Logger;
  private readonly limits: ResolvedDecodeLimits;
  private readonly dispatcher: Dispatcher<HandlerContext>;
  /** The abort of each call running now, by its delivery: shutdown aborts what outlives the grace period. */
  private readonly running = new Map<WireMessage, CallAbort>();
  /** Runs a call whose previous worker died alone here (suspect-lane.ts); the tracker claims through it. */
  private readonly lane = new SuspectLane();
  /** Cancels heard on the wire (NS.cancel), from any language. */
  private readonly cancels: CancelReceiver;
  private channel: WireChannel | undefined;
  /** The model `channel` was opened on: a setup on a newer one (after a reconnect) replaces it. */
  private channelModel: WireModel | undefined;
  private consumerTags: string[] = [];
  /** The consumers of work (requests, events): the ones a pause cancels. */
  private workTags: string[] = [];
  /** Pause, drain and cancel-all as an operator asks them (worker-controls.ts). */
  private readonly controls: WorkerControls;
  /** Whether the consumers are in place; false from a consumer cancel or a lost channel until they are back. */
  private consumingNow = false;
  /** Setups one after another: the connection's (after a reconnect) and the resubscriber's never run at once. */
  private setups: Promise<void> = Promise.resolve();
  /** Retries a lost subscription with backoff until it is back (resubscribe.ts). */
  private readonly resubscriber: Resubscriber;
  /**
   * Announcements go on a channel of their own: a re-declare that fails (404) closes the consuming channel, and an
   * instance that cannot consume must still say so (`consuming: false`) rather than fall silent and vanish.
   */
  private control: { readonly model: WireModel; readonly ch: WireChannel } | undefined;
  private state: ServiceState = 'starting';
  private closing: Promise<void> | undefined;
  private unregister: (() => void) | undefined;
  private readonly counters: ServiceStats = emptyStats();
  private readonly retries: MethodRetries;
  /** Replies, progress and settles of deliveries, on the channel they came on (delivery-settlement.ts). */
  private readonly settlement: DeliverySettlement;
  private announceTimer: NodeJS.Timeout | undefined;
  private readonly startedAt = Date.now();
  private readonly askedToAnnounce: AnnounceOnRequest;
  /** Records the announced methods where callers find them after every instance stopped (discovery/directory.ts). */
  private readonly recorder: DirectoryRecorder | undefined;
  /** The client handlers use for nested calls (shares this service's connection). */
  client!: RpcClient;
  private returns: AnnouncedMethods | undefined; // tells ctx calls to a served method with its queue unavailable (-32002) from unserved ones
  /** What the request and notification pipelines share with the service (request-pipeline.ts), made once the client is. */
  private pipeline!: PipelineDeps;
  private requests!: RequestPipeline;

  private constructor(private readonly connection: WireConnection, options: ServiceOptions, private readonly ownsConnection: boolean) {
    this.o = resolveServiceOptions(options, { clustered: connection.clustered });
    this.n = names(this.o.namespace);
    this.log = this.o.logger.child({ component: 'service', service: this.o.name, instanceId: this.o.instanceId });
    this.askedToAnnounce = new AnnounceOnRequest(() => this.announce(), this.log);
    const announced = Object.entries(this.o.methods).map(([name, m]) => ({ name, jobStyle: m.jobStyle === true }));
    this.recorder = this.o.directory && announced.length > 0 ? new DirectoryRecorder(this.o.directory, this.o.name, announced, this.log) : undefined;
    this.limits = resolveDecodeLimits(this.o.decodeLimits);
    this.retries = new MethodRetries(this.o.methods);
    this.settlement = new DeliverySettlement({ channel: () => this.channel, o: this.o, n: this.n, log: this.log, counters: this.counters, delayQueues: this.retries.delayQueues });
    this.cancels = new CancelReceiver(() => this.running.entries(), this.log);
    this.resubscriber = new Resubscriber({ attempt: () => this.resubscribe(), log: this.log });
    this.controls = new WorkerControls({
      stopWork: () => this.stopWork(),
      startWork: () => this.startWork(),
      abortAll: () => this.abortAll(),
      waitForRunning: () => this.waitForRunning(this.o.shutdownGraceMs),
      close: () => this.close(),
      announce: () => this.announce(),
      log: this.log,
    });
    this.dispatcher = new Dispatcher<HandlerContext>({
      exposeErrorStack: this.o.exposeErrorStack,
      onNotificationError: (err, call) => this.log.warn({ err, method: call.method }, 'notification handler failed'),
      onRequestError: (err, _call, ctx) => logHandlerError(err, ctx),
    });
    for (const mw of this.o.middleware) this.dispatcher.use(mw);
    for (const [name, def] of Object.entries(this.o.methods)) this.dispatcher.method(name, this.retries.registered(name, def));
    for (const [name, def] of Object.entries(this.o.reservedMethods)) this.dispatcher.method(name, def, { reserved: true });
    for (const [name, def] of Object.entries({ ...this.o.notifications, ...this.o.instanceNotifications })) this.dispatcher.notification(name, def);
  }

  /** Starts consuming on `connection`; `ownsConnection` makes `close()` close it too. */
  static async start(connection: WireConnection, options: ServiceOptions, ownsConnection = false): Promise<WarrenService> {
    const service = new WarrenService(connection, options, ownsConnection);
    service.client = await RpcClient.create(connection, { ...service.o.client, namespace: service.o.namespace, logger: service.o.logger });
    service.returns = explainReturnedRequests(service.client, connection, { logger: service.o.logger });
    const owner = { service: service.o.name, instanceId: service.o.instanceId, log: service.log, client: service.client, progressSink: service.settlement.progressSink.bind(service.settlement) };
    const { o, n, log, limits, dispatcher, running, lane, cancels, counters, retries, settlement } = service;
    service.pipeline = { o, n, log, limits, dispatcher, running, lane, cancels, counters, retries, settlement, owner };
    service.requests = new RequestPipeline(service.pipeline);
    await service.o.tracker?.start?.({ service: service.o.name, instanceId: service.o.instanceId, running: () => service.running.size, isolation: service.lane });
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

  /**
   * Connected and consuming: what a readiness probe asks (false while starting, reconnecting, draining, closed, and
   * from a consumer cancel until the re-subscribe succeeds, so the ops port's /readyz says so too).
   */
  get ready(): boolean {
    return this.state === 'running' && this.connection.state.type === 'open' && this.channel !== undefined && this.consumerTags.length > 0 && this.consumingNow;
  }

  /**
   * Pause consuming (calls wait in the queue), resume, drain (finish running calls, then close) and
   * cancel every running call: what the broker's `workers.*` methods ask over the bus, callable here too.
   */
  get worker(): WorkerControls {
    return this.controls;
  }

  stats(): Readonly<ServiceStats> {
    return { ...this.counters, running: this.running.size };
  }

  /**
   * Whether the instance's consumers are in place now. False while RabbitMQ has cancelled them (the
   * queue deleted, or its classic queue's home node down) and the re-subscribe is still retrying, or
   * while the connection is down; announced as `consuming` (the broker's /services shows it).
   */
  get consuming(): boolean {
    return this.consumingNow;
  }

  /**
   * Graceful shutdown: stop taking work, let running handlers finish within
   * `shutdownGraceMs`, abort and requeue what is left, then close channels and
   * (if owned) the connection. Idempotent.
   */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.state = 'draining';
      this.resubscriber.close();
      clearInterval(this.announceTimer);
      this.askedToAnnounce.close();
      this.publishControl({ v: 1, type: 'withdraw', service: this.o.name, instanceId: this.o.instanceId });
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
      await this.returns?.close();
      await this.o.tracker?.stop?.();
      await this.recorder?.settled();
      this.channel = undefined;
      if (ch) await closeChannel(ch);
      const control = this.control?.ch;
      this.control = undefined;
      if (control) await closeChannel(control).catch(() => undefined);
      if (this.ownsConnection) await this.connection.close();
      this.state = 'closed';
      this.log.info('service closed');
    })();
    return this.closing;
  }

  /** Declares and consumes on `model`: run by the connection on every (re)connect, and by the resubscriber. One at a time. */
  private setup(model: WireModel): Promise<void> {
    const run = this.setups.then(() => this.subscribe(model));
    this.setups = run.catch(() => undefined);
    return run;
  }

  /** One re-subscribe attempt under a live connection; without one, the connection's reconnect runs the setup. */
  private async resubscribe(): Promise<void> {
    const model = this.connection.model;
    if (this.state !== 'running' || !model) return;
    await this.setup(model);
  }

  private async subscribe(model: WireModel): Promise<void> {
    if (this.state === 'draining' || this.state === 'closed') return;
    // Already consuming on this model (a retry scheduled before the connection's own setup ran).
    if (this.channel !== undefined && this.channelModel === model) return;
    await this.openControl(model);
    const ch = await model.createChannel();
    ch.on('error', (err: Error) => this.log.warn({ err }, 'service channel error'));
    ch.on('close', () => {
      if (this.channel !== ch) return;
      this.channel = undefined;
      this.consumerTags = [];
      this.consumingNow = false;
      // Under a live connection (a cancel, a channel error) the resubscriber brings it back, for as long as it takes.
      if (this.state === 'running') this.resubscriber.lost();
    });
    try {
      await this.declareAndConsume(ch);
    } catch (err) {
      // The channel is closed by RabbitMQ (a 404 while the queue's node is down) or closed here: its close must not count twice.
      if (this.channel === ch) this.channel = undefined;
      await closeChannel(ch).catch(() => undefined);
      throw err;
    }
    this.channelModel = model;
    this.consumingNow = true;
    this.resubscriber.consuming();
    this.recorder?.reconnected();
    this.announce();
  }

  private async openControl(model: WireModel): Promise<void> {
    if (this.control?.model === model) return;
    const ch = await model.createChannel();
    ch.on('error', (err: Error) => this.log.debug({ err }, 'control channel error'));
    ch.on('close', () => {
      if (this.control?.ch === ch) this.control = undefined;
    });
    // Here, not on the work channel: announce-now is answered while the request queue's node is down (returned-requests.ts).
    await applyTopology(ch, instanceControlTopology(this.n, this.o.name, this.o.instanceId));
    await ch.consume(this.n.instanceControlQueue(this.o.name, this.o.instanceId), (msg) => msg && this.onControl(msg.content), { noAck: true });
    this.control = { model, ch };
  }

  private async declareAndConsume(ch: WireChannel): Promise<void> {
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
      ...(this.o.deliveryLimit === undefined ? {} : { deliveryLimit: this.o.deliveryLimit }),
      retryDelaysMs: [...this.retries.delayQueues],
    }));
    this.channel = ch;
    await this.cancels.listen(ch, this.n, this.o.name, this.o.instanceId);
    // prefetch with global=false applies to each consumer started after it.
    await ch.prefetch(this.o.prefetch, false);
    // A paused instance comes back from a reconnect paused: only a resume (or a restart) consumes again.
    this.workTags = this.controls.paused ? [] : await this.consumeWork(ch);
    this.consumerTags = [...this.workTags];
  }

  /** Starts the consumers of work (requests, events) on `ch`. */
  private async consumeWork(ch: WireChannel): Promise<string[]> {
    const tags: string[] = [];
    if (this.dispatcher.methodNames.length > 0) {
      tags.push((await ch.consume(this.n.serviceQueue(this.o.name), (msg) => this.onDelivery(ch, msg, 'request'))).consumerTag);
    }
    if (Object.keys(this.o.notifications).length > 0) {
      tags.push((await ch.consume(this.n.serviceEventQueue(this.o.name), (msg) => this.onDelivery(ch, msg, 'event'))).consumerTag);
    }
    if (Object.keys(this.o.instanceNotifications).length > 0) {
      tags.push((await ch.consume(this.n.instanceEventQueue(this.o.name, this.o.instanceId), (msg) => this.onDelivery(ch, msg, 'event'))).consumerTag);
    }
    return tags;
  }

  /**
   * Pause: cancels the work consumers. Deliveries already taken run to their end and are settled on
   * the same channel (nothing requeued, nothing run twice); the rest wait in the queue.
   */
  private async stopWork(): Promise<void> {
    const ch = this.channel;
    const tags = this.workTags.splice(0);
    this.consumerTags = this.consumerTags.filter((t) => !tags.includes(t));
    for (const tag of tags) await ch?.cancel(tag).catch(() => undefined);
  }

  /** Resume: consumes again on the current channel (without one, the next reconnect's setup does). */
  private async startWork(): Promise<void> {
    const ch = this.channel;
    if (!ch || this.workTags.length > 0 || this.state !== 'running') return;
    const tags = await this.consumeWork(ch);
    if (this.channel !== ch) return;
    this.workTags = tags;
    this.consumerTags = [...tags, ...this.consumerTags];
  }

  /** Cancel-all: aborts every call running here; each caller is answered -32003. */
  private abortAll(): number {
    const aborts = [...this.running.values()];
    for (const abort of aborts) abort.abort(new CancelledError(undefined, { reason: 'cancelled' }));
    return aborts.length;
  }

  /** One message on the instance's control queue: a worker control, else an announce-now request. */
  private onControl(body: Buffer): void {
    const control: WorkerControlMessage | undefined = parseWorkerControl(body);
    if (control) void this.controls.apply(control);
    else this.askedToAnnounce.onMessage(body);
  }

  /** What this instance announces for discovery. */
  describe(): AnnounceMessage {
    return describeInstance(this.o, this.startedAt, this.running.size, this.consumingNow, this.workerReport());
  }

  private workerReport(): WorkerReport {
    const last: AppliedControl | undefined = this.controls.last;
    return {
      host: hostname(),
      pid: process.pid,
      prefetch: this.o.prefetch,
      paused: this.controls.paused,
      draining: this.controls.draining,
      handled: this.counters.answered,
      failed: this.counters.failed,
      ...(last === undefined ? {} : { lastControl: last }),
    };
  }

  private announce(): void {
    if (this.state !== 'running' && this.state !== 'starting') return;
    this.publishControl(this.describe());
    this.recorder?.announced();
  }

  private publishControl(message: Announcement): void {
    try {
      (this.control?.ch ?? this.channel)?.publish(this.n.controlExchange, '', Buffer.from(JSON.stringify(message)), { contentType: 'application/json', expiration: String(this.o.announceIntervalMs * 3) });
    } catch (err) {
      this.log.debug({ err }, 'announcement not published');
    }
  }

  private onDelivery(ch: WireChannel, msg: WireMessage | null, kind: 'request' | 'event'): void {
    if (msg === null) {
      // RabbitMQ cancelled our consumer (its queue deleted, or a classic queue's home node down): say so while
      // this channel can still carry the announcement, then rebuild on a new one, retried until it consumes again.
      this.log.warn({ kind }, 'consumer cancelled by the broker; re-subscribing');
      if (this.channel === ch && this.consumingNow) {
        this.consumingNow = false;
        this.announce();
      }
      void ch.close().catch(() => undefined);
      return;
    }
    const work = kind === 'request' ? this.requests.handle(ch, msg) : handleNotifications(this.pipeline, ch, msg);
    work.catch((err: unknown) => {
      this.log.error({ err }, 'delivery handling failed');
      this.settlement.settle(ch, msg, 'dead-letter', { reason: 'delivery_handling_failed', attempts: 1 });
    });
  }

  private async waitForRunning(ms: number): Promise<void> {
    const until = Date.now() + ms;
    while (this.running.size > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
  }
}
