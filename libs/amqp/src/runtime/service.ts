import { hostname } from 'node:os';
import { closeChannel, type WireChannel, type WireModel, type WireMessage, type WireConnection } from '@warren/amqp-transport';
import {
  CancelledError, DeadlineExceededError, Dispatcher, ErrorCode, JsonRpcError, ShuttingDownError, decode, encodeResponse,
  errorResponse, isErrorResponse, resolveDecodeLimits, type Decoded, type NotificationMessage, type RequestMessage, type ResolvedDecodeLimits,
  type ResponseMessage,
} from '@warren/jsonrpc';
import type { Logger } from '@warren/logger';
import { RpcClient } from '../engine/client';
import { CallAbort } from './call-abort';
import { CallContext, type CallFacts, type ContextOwner, type HandlerContext } from './context';
import { forgedDeathHeader, forwardDeadLetter, type DeadLetterReason } from '../wire/dead-letter';
import { readDelivery, type DeliveryInfo } from '../wire/delivery';
import { names, type Names } from '../wire/names';
import { encodeProgress, progressHeader, type ProgressListener } from '../wire/progress';
import { planRetry, publishRetry, retryDelays, retrySchedule, type RetryPlan, type RetryPolicy } from './retry';
import { resolveServiceOptions, type ResolvedServiceOptions, type ServiceMethod, type ServiceOptions } from './service-options';
import { emptyStats, type ServiceStats } from './service-stats';
import { observeSettled } from './observe';
import { applyTopology, coreTopology, serviceTopology } from '../wire/topology';
import { SuspectLane } from './suspect-lane';
import { outcomeOf, type Executed, type RunInfo, type RunningCall, type Settle, type TrackedOutcome } from '@warren/calls';
import type { EffectLedger } from './once';
import type { Announcement, AnnounceMessage } from '../discovery/announcement';
import { AnnounceOnRequest } from '../discovery/announce-now';
import { DirectoryRecorder } from '../discovery/directory';
import { describeInstance } from './describe';
import { expiredResponse } from './late-answer';
import { CancelReceiver } from '../wire/wire-cancel';
import { Resubscriber } from './resubscribe';
import { parseTraceparent } from '../wire/trace';
import { parseWorkerControl, type AppliedControl, type WorkerControlMessage, type WorkerReport } from '../wire/worker-control';
import { WorkerControls } from './worker-controls';
import { activeTracer } from '../tracing/tracer';
import { endServerSpan, inSpan, markTakeover, tracedDelivery, type TracedDelivery } from './server-span';

type ServiceState = 'starting' | 'running' | 'draining' | 'closed';

/** Sentinel a race returns when the call's signal fired first. */
const aborted = Symbol('aborted');

const requeued: Executed = { kind: 'requeue' };
/** A batch of notifications: nothing to answer. */
const nothing: Executed = { kind: 'answer', text: undefined, response: undefined };

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
  /** What the handlers of methods with a retry policy threw, by their context. */
  private readonly failures = new WeakMap<HandlerContext, unknown>();
  private readonly policies = new Map<string, RetryPolicy>();
  /** Each policy's waits after attempt 1, 2, ... (retrySchedule), for the tracker: a lost worker's call waits them too. */
  private readonly schedules = new Map<string, readonly number[]>();
  /** The waits a delay queue is declared for (topology.ts): a retry publishes only to one of them. */
  private readonly delayQueues: ReadonlySet<number>;
  private announceTimer: NodeJS.Timeout | undefined;
  private readonly startedAt = Date.now();
  private readonly askedToAnnounce: AnnounceOnRequest;
  /** Records the announced methods where callers find them after every instance stopped (discovery/directory.ts). */
  private readonly recorder: DirectoryRecorder | undefined;
  /** The client handlers use for nested calls (shares this service's connection). */
  client!: RpcClient;
  /** What every handler context of this service shares. */
  private owner!: ContextOwner;

  private constructor(private readonly connection: WireConnection, options: ServiceOptions, private readonly ownsConnection: boolean) {
    this.o = resolveServiceOptions(options, { clustered: connection.clustered });
    this.n = names(this.o.namespace);
    this.log = this.o.logger.child({ component: 'service', service: this.o.name, instanceId: this.o.instanceId });
    this.askedToAnnounce = new AnnounceOnRequest(() => this.announce(), this.log);
    const announced = Object.entries(this.o.methods).map(([name, m]) => ({ name, jobStyle: m.jobStyle === true }));
    this.recorder = this.o.directory && announced.length > 0 ? new DirectoryRecorder(this.o.directory, this.o.name, announced, this.log) : undefined;
    this.limits = resolveDecodeLimits(this.o.decodeLimits);
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
    });
    for (const mw of this.o.middleware) this.dispatcher.use(mw);
    for (const [name, def] of Object.entries(this.o.methods)) {
      if (def.retry) this.policies.set(name, def.retry);
      if (def.retry) this.schedules.set(name, retrySchedule(def.retry));
      this.dispatcher.method(name, def.retry ? this.capturingFailures(def) : def);
    }
    this.delayQueues = new Set(retryDelays([...this.policies.values()]));
    for (const [name, def] of Object.entries(this.o.reservedMethods)) this.dispatcher.method(name, def, { reserved: true });
    for (const [name, def] of Object.entries({ ...this.o.notifications, ...this.o.instanceNotifications })) this.dispatcher.notification(name, def);
  }

  /** Starts consuming on `connection`; `ownsConnection` makes `close()` close it too. */
  static async start(connection: WireConnection, options: ServiceOptions, ownsConnection = false): Promise<WarrenService> {
    const service = new WarrenService(connection, options, ownsConnection);
    service.client = await RpcClient.create(connection, { ...service.o.client, namespace: service.o.namespace, logger: service.o.logger });
    service.owner = { service: service.o.name, instanceId: service.o.instanceId, log: service.log, client: service.client, progressSink: (facts) => service.progressSink(facts) };
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
      retryDelaysMs: [...this.delayQueues],
    }));
    this.channel = ch;
    await this.cancels.listen(ch, this.n, this.o.name, this.o.instanceId);
    const tags: string[] = [];
    // prefetch with global=false applies to each consumer started after it.
    await ch.prefetch(this.o.prefetch, false);
    // A paused instance comes back from a reconnect paused: only a resume (or a restart) consumes again.
    this.workTags = this.controls.paused ? [] : await this.consumeWork(ch);
    tags.push((await ch.consume(this.n.instanceControlQueue(this.o.name, this.o.instanceId), (msg) => msg && this.onControl(msg.content), { noAck: true })).consumerTag);
    this.consumerTags = [...this.workTags, ...tags];
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
    const work = kind === 'request' ? this.handleRequest(ch, msg) : this.handleEvent(ch, msg);
    work.catch((err: unknown) => {
      this.log.error({ err }, 'delivery handling failed');
      this.settle(ch, msg, 'dead-letter', { reason: 'delivery_handling_failed', attempts: 1 });
    });
  }

  private async handleRequest(ch: WireChannel, msg: WireMessage): Promise<void> {
    const info = readDelivery(msg, this.o.defaultTimeoutMs);
    const startedAt = Date.now();
    if (info.deadline <= startedAt) {
      // Nobody waits for this answer any more; running it now would be work done for nothing. The answer is for a
      // caller whose deadline was wrong (in seconds, say), so its mistake is not a silent wait.
      this.counters.expired++;
      if (this.o.observer) observeSettled(this.o.observer, { method: this.methodLabel(methodOf(msg.content)), outcome: 'expired' }, info, startedAt);
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
      if (this.o.observer) observeSettled(this.o.observer, { method: this.methodLabel(singleRequest(decoded)?.method), outcome: cancelled ? 'error' : 'dead_lettered', reply: unservable }, info, startedAt);
      this.settle(ch, msg, cancelled ? 'ack' : 'dead-letter', deadReason('unservable', unservable, info.attempt));
      return;
    }
    const abort = new CallAbort();
    this.running.set(msg, abort);
    // Clamped: setTimeout fires at once for delays past 2^31-1 ms, and the header is the caller's to set.
    const timer = setTimeout(() => abort.abort(new DeadlineExceededError()), Math.min(info.deadline - startedAt, 2 ** 31 - 1));
    const single = decoded.kind === 'single' && decoded.item.kind === 'request' ? decoded.item.message : undefined;
    // Tracing off (no SDK registered): no span, and the delivery goes on as it was read.
    const tracer = activeTracer();
    const delivery: TracedDelivery = tracer ? tracedDelivery(tracer, info, { method: single?.method ?? 'batch', service: this.o.name, instanceId: this.o.instanceId, queue: this.n.serviceQueue(this.o.name) }, startedAt) : info;
    let outcome: TrackedOutcome | undefined;
    try {
      const run = this.run(single, decoded, delivery, abort, startedAt);
      // A synchronous handler's untracked call comes back as a value: no promise between it and its reply.
      outcome = run instanceof Promise ? await run : run;
      clearTimeout(timer);
      // The reply does not wait for the store; the settle does, so a redelivery finds the outcome (docs/reliability.md).
      if (outcome.reply !== undefined && info.replyTo) this.reply(info, outcome.reply);
      this.count(outcome);
      if (this.o.observer) observeSettled(this.o.observer, { method: this.methodLabel(single?.method), outcome }, info, startedAt);
      if (outcome.stored) await outcome.stored;
      this.settleAs(ch, msg, outcome.settle, single?.method ?? '', info.deadline, outcome.source === 'store' ? 'worker_lost' : 'retryable_error');
    } finally {
      clearTimeout(timer);
      this.running.delete(msg);
      if (delivery.span) endServerSpan(delivery.span, outcome, outcome?.source === 'store' ? 'worker_lost' : 'retryable_error');
    }
  }

  /** Runs one request: through the tracker when it tracks it (a single request), else here. */
  private run(single: RequestMessage | undefined, decoded: Decoded, info: TracedDelivery, abort: CallAbort, startedAt: number): TrackedOutcome | Promise<TrackedOutcome> {
    const tracker = this.o.tracker;
    if (!tracker || !single) return this.untracked(single, decoded, info, abort);
    const maxAttempts = this.policies.get(single.method)?.attempts;
    const retryDelaysMs = this.schedules.get(single.method);
    const traceId = parseTraceparent(info.traceparent)?.traceId;
    const call: RunningCall = { callId: info.callId, id: single.id, method: single.method, service: this.o.name, worker: this.o.instanceId, attempt: info.attempt, firstDelivery: info.firstDelivery, deadline: info.deadline, startedAt, params: single.params, ...(traceId === undefined ? {} : { traceId }), ...(maxAttempts === undefined ? {} : { maxAttempts }), ...(retryDelaysMs === undefined ? {} : { retryDelaysMs }) };
    let executed = false;
    const execute = (run: RunInfo): Promise<Executed> => {
      executed = true;
      const result = this.execute(single, decoded, info, abort, run, call);
      return result instanceof Promise ? result : Promise.resolve(result);
    };
    return tracker.run(call, abort, execute).catch((err: unknown) => {
      if (executed) throw err;
      // Tracking is an aid, not a gate: a tracker that failed before running the call lets it run untracked.
      this.log.debug({ err }, 'tracker failed; running untracked');
      return this.untracked(single, decoded, info, abort);
    });
  }

  /** A run no tracker watches: batches, and every call of an untracked service. */
  private untracked(single: RequestMessage | undefined, decoded: Decoded, info: TracedDelivery, abort: CallAbort): TrackedOutcome | Promise<TrackedOutcome> {
    if (this.o.tracker) return this.laned(single, decoded, info, abort);
    // No tracker, no lane.
    const executed = this.execute(single, decoded, info, abort, { attempt: info.attempt });
    return executed instanceof Promise ? executed.then(outcomeOf) : outcomeOf(executed);
  }

  private async laned(single: RequestMessage | undefined, decoded: Decoded, info: TracedDelivery, abort: CallAbort): Promise<TrackedOutcome> {
    // Untracked work on a tracked instance stays out of a suspect's way too. Awaited only when the lane
    // made it wait: a healthy instance's synchronous `true` costs no microtask.
    const entry = this.lane.enter(abort);
    const laned = typeof entry === 'boolean' ? entry : await entry;
    try {
      const executed = this.execute(single, decoded, info, abort, { attempt: info.attempt });
      return outcomeOf(executed instanceof Promise ? await executed : executed);
    } finally {
      if (laned) this.lane.leave();
    }
  }

  /**
   * Runs the handler(s) of a delivered request and says what came of it; an abort that fired first answers
   * for it. A value, not a promise, when the handler answered synchronously.
   */
  private execute(single: RequestMessage | undefined, decoded: Decoded, info: TracedDelivery, abort: CallAbort, run: RunInfo, tracked?: RunningCall): Executed | Promise<Executed> {
    const ctx = single ? this.context(single, info, run.attempt, abort, tracked, run.effects) : undefined;
    // A tracked call RabbitMQ delivers again runs here because the tracker found its previous run lost (or given back).
    if (info.span && tracked && info.redelivered) markTakeover(info.span, run.attempt);
    // A call aborted before its handler started (cancelled or timed out while the tracker decided) never starts.
    // A batch's members get contexts of their own; each one's held-back progress is flushed with the single's.
    const members: CallContext[] = [];
    const member = (m: RequestMessage | NotificationMessage): CallContext => {
      const c = this.context(m, info, run.attempt, abort);
      members.push(c);
      return c;
    };
    const work = abort.aborted ? aborted : info.span ? inSpan(info.span, () => this.dispatch(single, ctx, decoded, member)) : this.dispatch(single, ctx, decoded, member);
    if (work instanceof Promise) return abort.race(work, aborted).then((outcome) => this.executed(outcome, single, ctx, members, info, run, abort));
    return this.executed(work, single, ctx, members, info, run, abort);
  }

  /** Hands a request (its context made) or a batch (contexts made per member) to the handlers. */
  private dispatch(single: RequestMessage | undefined, ctx: CallContext | undefined, decoded: Decoded, member: (m: RequestMessage | NotificationMessage) => CallContext): ResponseMessage | Promise<ResponseMessage | ResponseMessage[] | null> {
    return single && ctx ? this.dispatcher.respond(single, ctx) : this.dispatcher.handle(decoded, member);
  }

  /** What a run came to, once its handler(s) answered (or its abort fired first). */
  private executed(outcome: ResponseMessage | ResponseMessage[] | null | typeof aborted, single: RequestMessage | undefined, ctx: CallContext | undefined, members: readonly CallContext[], info: DeliveryInfo, run: RunInfo, abort: CallAbort): Executed {
    // Held-back progress goes out before the answer, on the same channel, so it arrives first.
    ctx?.endProgress();
    for (const c of members) c.endProgress();
    const response = outcome === aborted ? abortedResponse(abort.reason, single) : outcome;
    if (response === 'requeue') return requeued;
    if (!response) return nothing;
    if (Array.isArray(response)) return { kind: 'answer', text: encodeResponse(response), response: undefined };
    const plan = ctx && single ? this.retryPlan(single.method, response, ctx, run.attempt, info.deadline) : undefined;
    if (plan?.action === 'retry') return { kind: 'retry', delayMs: plan.delayMs, nextAttempt: plan.nextAttempt, nextTryAt: plan.nextTryAt };
    if (isErrorResponse(response)) this.counters.failed++;
    // Serialized once: the tracker stores the very text the caller receives.
    const text = encodeResponse(response);
    if (plan?.action === 'exhausted') return { kind: 'answer', text, response, deadLetter: deadReason('retries_exhausted', response, run.attempt) };
    return { kind: 'answer', text, response };
  }

  /** A method's metrics label: only methods this service serves, so a caller cannot grow the label set. */
  private methodLabel(method: string | undefined): string {
    return method !== undefined && Object.hasOwn(this.o.methods, method) ? method : 'other';
  }

  private count(outcome: TrackedOutcome): void {
    const { settle } = outcome;
    if (outcome.source === 'store') this.counters.answeredFromStore++;
    else if (settle.action === 'ack' || settle.action === 'dead-letter') this.counters.answered++;
    if (settle.action === 'dead-letter') this.counters.deadLettered++;
  }

  /** Settles a delivery as its outcome says. */
  private settleAs(ch: WireChannel, msg: WireMessage, settle: Settle, method: string, deadline: number, why: 'retryable_error' | 'worker_lost'): void {
    switch (settle.action) {
      case 'ack':
      case 'requeue':
        return this.settle(ch, msg, settle.action);
      case 'dead-letter':
        return this.settle(ch, msg, 'dead-letter', settle.code === undefined ? { reason: settle.reason, attempts: settle.attempts } : { reason: settle.reason, code: settle.code, attempts: settle.attempts });
      case 'retry':
        return this.retry(ch, msg, method, deadline, settle, why);
    }
  }

  /** Wraps a method with a retry policy so the error its handler throws (not only the answer) is seen by {@link retryPlan}. */
  private capturingFailures(def: ServiceMethod): ServiceMethod {
    const failures = this.failures;
    return {
      ...def,
      handler: async (params, ctx) => {
        try {
          return await def.handler(params, ctx);
        } catch (err) {
          failures.set(ctx, err);
          throw err;
        }
      },
    };
  }

  private retryPlan(method: string, response: ResponseMessage, ctx: HandlerContext, attempt: number, deadline: number): RetryPlan | undefined {
    const policy = this.policies.get(method);
    if (!policy) return undefined;
    const plan = planRetry(policy, response, this.failures.get(ctx), attempt, deadline, Date.now());
    return plan.action === 'answer' ? undefined : plan;
  }

  /**
   * Sends the request to its delay queue as the next attempt, then acks this one (retry.ts): after a
   * retryable error, or for a call whose worker was lost (the tracker's `retry`). A wait with no
   * declared delay queue (a tracker asking for one no policy here has) is requeued instead: the
   * default exchange would drop it silently.
   */
  private retry(ch: WireChannel, msg: WireMessage, method: string, deadline: number, next: { readonly delayMs: number; readonly nextAttempt: number }, why: 'retryable_error' | 'worker_lost'): void {
    if (this.channel !== ch) return;
    const callId = msg.properties.correlationId as unknown;
    if (!this.delayQueues.has(next.delayMs)) {
      this.log.error({ callId, method, delayMs: next.delayMs }, 'no delay queue for this wait; requeued');
      return this.settle(ch, msg, 'requeue');
    }
    try {
      publishRetry(ch, this.n.retryQueue(this.o.name, next.delayMs), msg, next.nextAttempt, deadline);
      ch.ack(msg);
      this.counters.retried++;
      this.log.info({ callId, method, nextAttempt: next.nextAttempt, delayMs: next.delayMs, why }, why === 'worker_lost' ? 'call whose worker was lost retried after a delay' : 'call failed with a retryable error; retried after a delay');
    } catch (err) {
      this.log.debug({ err }, 'retry on a closing channel');
    }
  }

  private async handleEvent(ch: WireChannel, msg: WireMessage): Promise<void> {
    const info = readDelivery(msg, this.o.defaultTimeoutMs);
    const decoded = decode(msg.content, this.limits);
    const messages = notificationsIn(decoded);
    if (messages.length === 0) this.log.warn({ callId: info.callId }, 'event queue received something that is not a notification; dropped');
    const abort = new CallAbort();
    this.running.set(msg, abort);
    // Held back (not run) while a suspect runs alone; given back if the service shuts down meanwhile.
    const entry = this.o.tracker ? this.lane.enter(abort) : false;
    const laned = typeof entry === 'boolean' ? entry : await entry;
    try {
      if (this.o.tracker && !laned) return this.settle(ch, msg, 'requeue');
      for (const message of messages) {
        // Tracing on: a consumer span per notification, active around its handler (nested calls are its children).
        const tracer = activeTracer();
        const delivery: TracedDelivery = tracer ? tracedDelivery(tracer, info, { method: message.method, service: this.o.name, instanceId: this.o.instanceId, queue: msg.fields.exchange, notification: true }, Date.now()) : info;
        const ctx = this.context(message, delivery, info.attempt, abort);
        try {
          await (delivery.span ? inSpan(delivery.span, () => this.dispatcher.handleNotification(message, ctx)) : this.dispatcher.handleNotification(message, ctx));
        } finally {
          delivery.span?.end();
        }
        // A notification's progress has no caller; a held-back report still goes to the tracker now, not after.
        ctx.endProgress();
        this.counters.notified++;
      }
      this.settle(ch, msg, 'ack');
    } finally {
      if (laned) this.lane.leave();
      this.running.delete(msg);
    }
  }

  private context(message: RequestMessage | NotificationMessage, info: TracedDelivery, attempt: number, abort: CallAbort, tracked?: RunningCall, effects?: EffectLedger): CallContext {
    const facts: CallFacts = { callId: info.callId, method: message.method, id: 'id' in message ? message.id : undefined, deadline: info.deadline, attempt, parentTrace: info.traceparent, tracestate: info.tracestate, span: info.span, replyTo: info.replyTo, wantsProgress: info.wantsProgress, tracked, effects };
    return new CallContext(facts, abort, this.owner);
  }

  /** Where one call's progress goes: its caller's reply queue (when asked for) and the tracker. */
  private progressSink(facts: CallFacts): ProgressListener {
    return (p) => {
      const ch = this.channel;
      if (ch && facts.wantsProgress && facts.replyTo) {
        try {
          ch.publish('', facts.replyTo, encodeProgress(p), { correlationId: facts.callId, contentType: 'application/json', headers: { [progressHeader]: 1 }, userId: this.o.userId });
        } catch (err) {
          this.log.debug({ err, callId: facts.callId }, 'progress not published');
        }
      }
      if (facts.tracked) this.o.tracker?.progress?.(facts.tracked, p).catch((err: unknown) => this.log.debug({ err, callId: facts.callId }, 'progress not stored'));
    };
  }

  /** Publishes a response (or its text, already serialized) to the caller's reply queue. */
  private reply(info: DeliveryInfo, response: ResponseMessage | ResponseMessage[] | string): void {
    const ch = this.channel;
    if (!ch || !info.replyTo) return;
    try {
      // The default exchange drops a reply to a vanished queue quietly; it never closes the channel.
      ch.publish('', info.replyTo, Buffer.from(typeof response === 'string' ? response : encodeResponse(response)), { correlationId: info.callId, contentType: 'application/json', userId: this.o.userId });
    } catch (err) {
      this.log.warn({ err, callId: info.callId }, 'reply publish failed');
    }
  }

  /**
   * Acks, requeues or dead-letters on the channel the message came on; a dead channel means RabbitMQ
   * will redeliver it. Dead-lettering is done by hand (a copy with the reason, then an ack), so the
   * dead-letter queue says why (dead-letter.ts).
   */
  private settle(ch: WireChannel, msg: WireMessage, action: 'ack' | 'dead-letter' | 'requeue', why: DeadLetterReason = { reason: 'rejected', attempts: 1 }): void {
    if (this.channel !== ch) return;
    try {
      if (action === 'dead-letter') {
        if (forgedDeathHeader(msg)) this.log.warn({ callId: msg.properties.correlationId as unknown }, 'message with a malformed x-death header dead-lettered by hand');
        forwardDeadLetter(ch, this.n.deadLetterExchange, this.o.name, msg, why);
      } else if (action === 'ack') ch.ack(msg);
      else ch.nack(msg, false, true);
    } catch (err) {
      this.log.debug({ err }, 'settle on a closing channel');
    }
  }

  private async waitForRunning(ms: number): Promise<void> {
    const until = Date.now() + ms;
    while (this.running.size > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
  }
}

/** The reason headers of a dead letter answered with `response`; `data.attempts` (WorkerLost) counts over `attempt`. */
function deadReason(reason: string, response: ResponseMessage, attempt: number): DeadLetterReason {
  if (!isErrorResponse(response)) return { reason, attempts: attempt };
  const data = response.error.data;
  const counted = typeof data === 'object' && data !== null && !Array.isArray(data) && typeof data['attempts'] === 'number' ? data['attempts'] : attempt;
  return { reason, code: response.error.code, attempts: counted };
}

/** The answer for a message no handler can take: parse errors, invalid requests, stray responses. */
function unservableResponse(decoded: Decoded): ResponseMessage | undefined {
  if (decoded.kind === 'rejected') return decoded.response;
  if (decoded.kind === 'single' && decoded.item.kind === 'invalid') return decoded.item.response;
  if (decoded.kind === 'single' && decoded.item.kind === 'response') return errorResponse(decoded.item.message.id, ErrorCode.InvalidRequest);
  return undefined;
}

/** The answer to a request cancelled before it arrived (the call's id when it has one). */
function cancelledResponse(decoded: Decoded): ResponseMessage {
  const id = decoded.kind === 'single' && decoded.item.kind === 'request' ? decoded.item.message.id : null;
  return { jsonrpc: '2.0', error: new CancelledError(undefined, { reason: 'cancelled' }).toErrorObject(), id };
}

/** The single request in a decoded body, if that is what it is. */
function singleRequest(decoded: Decoded): RequestMessage | undefined {
  return decoded.kind === 'single' && decoded.item.kind === 'request' ? decoded.item.message : undefined;
}

/** The method of an expired request, read only for the metrics label (the body is not otherwise decoded). */
function methodOf(body: Buffer): string {
  try {
    const parsed: unknown = JSON.parse(body.toString('utf8'));
    return typeof parsed === 'object' && parsed !== null && 'method' in parsed && typeof parsed.method === 'string' ? parsed.method : '';
  } catch {
    return '';
  }
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
