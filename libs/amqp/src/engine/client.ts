import type { WireModel, WireConfirmChannel, WireConnection } from '@warren/amqp-transport';
import {
  JsonRpcError, PendingCalls, RpcAbortedError, RpcBufferFullError, RpcConnectionLostError,
  RpcReplyQueueLostError, RpcShuttingDownError, RpcTimeoutError, RpcTooLargeError, RpcUnreadableReplyError, failureResponse, isErrorResponse,
  notificationMessage, requestMessage, toJsonRpcError, encode as encodeMessage, type JsonValue, type LocalError, type NotificationMessage,
  type Params, type RequestMessage, type ResponseMessage, type SettleListener,
} from '@warren/jsonrpc';
import type { JobStatus, JobStore } from '@warren/calls';
import type { Logger } from '@warren/logger';
import { CallListeners } from './call-listeners';
import type { BatchEntry, BatchResult, CallOptions, CancelListener, ClientStats, NotifyOptions, RpcProxy, SendListener, SettledListener } from './call-options';
import { openClientChannel } from './client-channel';
import { movedReplyId, resolveClientOptions, type ClientOptions, type ResolvedClientOptions } from './client-options';
import { ClientOutbox, type OutboundRequest } from './client-outbox';
import { closeChannel } from '@warren/amqp-transport';
import { assertMethodName, names, type Names } from '../wire/names';
import { OfflineBuffer } from './offline-buffer';
import { CallIds } from './call-ids';
import { ReplyTrust } from './reply-users';
import type { Progress } from '../wire/progress';
import { directReplyQueue } from './reply-consumer';
import type { AvailabilityVerdict } from './availability-verdict';
import { failReturned, type ReturnExplainer } from './returned-request';
import { RestartProbe } from './restart-probe';
import { publishCancel, publishCancelConfirmed } from '../wire/wire-cancel';
import { rpcProxy } from './proxy';
import { childTraceparent, parseTraceparent, validTracestate } from '../wire/trace';
import { dueAtOf } from './delay-options';
import { JobSender, type EnqueueOptions, type EnqueuedJob } from './enqueue';
import { Notifier } from './notify';
import { activeTracer } from '../tracing/tracer';
import { endWithError, endWithResponse, parentContext, startClientSpan, traceparentOf, tracestateOf } from '../tracing/call-spans';

/**
 * A JSON-RPC client over RabbitMQ: requests go to the request exchange with
 * the method as routing key, replies come back on this client's reply queue
 * matched by correlation id.
 */
export class RpcClient {
  private readonly o: ResolvedClientOptions;
  private readonly n: Names;
  private readonly log: Logger;
  private readonly pending: PendingCalls<string, ResponseMessage>;
  private readonly buffer: OfflineBuffer;
  /** Calls published and not yet answered; the ones a lost reply path takes with it. */
  private readonly onWire = new Set<string>();
  private channel: WireConfirmChannel | undefined;
  /** Call ids (correlation ids) and notification message ids: random, so nobody can predict them. */
  private readonly ids: CallIds;
  /** Names the named reply queue: the client id, until a reply queue that cannot be declared again is left for a new one. */
  private replyId: string;
  /** Counts default JSON-RPC ids (the body's, not the call id). */
  private idSeq = 0;
  /** With `replyUsers`: the RabbitMQ user each checked call's reply and progress must come from. */
  private readonly trust: ReplyTrust;
  private closing: Promise<void> | undefined;
  private unregister: (() => void) | undefined;
  private lateReplies = 0;
  private returned = 0;
  /** Returned requests whose explainer has not answered yet (returned-request.ts). */
  private readonly explaining = new Set<string>();
  private readonly listeners: CallListeners;
  /** Puts requests and notifications onto the channel (client-outbox.ts). */
  private readonly outbox: ClientOutbox;
  private readonly jobs: JobSender; // enqueue.ts; notify.ts below: nothing of either runs per call
  private readonly notes: Notifier;
  /** Deadlines of delayed or abortable calls pending, by call id: a caller's abort tells workers to remember the cancel that long. */
  private readonly delayedDeadlines = new Map<string, number>();
  private availability: ((method: string) => AvailabilityVerdict) | undefined;
  private explainReturn: ReturnExplainer | undefined;
  /** Named mode: tells a reconnect to a restarted broker from a mere connection drop (restart-probe.ts). */
  private readonly probe: RestartProbe;

  private constructor(private readonly connection: WireConnection, options: ClientOptions, private readonly ownsConnection: boolean) {
    this.o = resolveClientOptions(options);
    this.n = names(this.o.namespace);
    this.log = this.o.logger.child({ component: 'rpc-client', clientId: this.o.clientId });
    this.ids = new CallIds(this.o.clientId);
    this.replyId = this.o.clientId;
    this.probe = new RestartProbe(this.n, () => this.replyId, this.o.replyQueueExpiresMs);
    this.trust = new ReplyTrust(this.o.replyUsers);
    this.listeners = new CallListeners(this.log);
    this.buffer = new OfflineBuffer(this.o.maxBuffered);
    this.pending = new PendingCalls<string, ResponseMessage>({
      maxPending: this.o.maxPending,
      timeoutError: () => new RpcTimeoutError(),
      abortError: (_id, reason) => new RpcAbortedError(reason === undefined ? undefined : String(reason instanceof Error ? reason.message : reason)),
    });
    this.outbox = new ClientOutbox({
      n: this.n,
      pending: this.pending,
      onWire: this.onWire,
      channel: () => this.channel,
      replyQueue: () => this.replyQueue,
      holdOrFail: (publish, fail) => this.holdOrFail(publish, fail),
    });
    const { n, ids, pending, log } = this;
    this.jobs = new JobSender({ n, ids, pending, channel: () => this.channel, explaining: this.explaining, holdOrFail: (p, f) => this.holdOrFail(p, f), encode: (m) => this.encode(m), confirmTimeoutMs: this.o.defaultTimeoutMs });
    this.notes = new Notifier({ n, ids, outbox: this.outbox, log, persistent: this.o.persistent, defaultTimeoutMs: this.o.defaultTimeoutMs });
  }

  /** Creates a client on a connection; `ownsConnection` makes `close()` close the connection too. */
  static async create(connection: WireConnection, options: ClientOptions = {}, ownsConnection = false): Promise<RpcClient> {
    const client = new RpcClient(connection, options, ownsConnection);
    connection.on('lost', client.onConnectionLost);
    client.unregister = await connection.onOpen((model) => client.setup(model));
    return client;
  }

  get id(): string { return this.o.clientId; }

  get namespace(): string { return this.n.namespace; }

  get replyQueue(): string { return this.o.replyMode === 'direct' ? directReplyQueue : this.n.replyQueue(this.replyId); }

  stats(): ClientStats {
    return { pending: this.pending.size, buffered: this.buffer.size, onWire: this.onWire.size, lateReplies: this.lateReplies, returned: this.returned, untrustedReplies: this.trust.dropped };
  }

  /** Installs the check that fails calls to a service without consumers (see AvailabilityGate); undefined removes it. */
  checkAvailability(check: ((method: string) => AvailabilityVerdict) | undefined): void {
    this.availability = check;
  }

  /** Installs what a returned request fails with (returned-request.ts; connectClient's default asks the announcements); returns the one replaced. */
  explainReturns(explain: ReturnExplainer | undefined): ReturnExplainer | undefined {
    const previous = this.explainReturn;
    this.explainReturn = explain;
    return previous;
  }

  /** Registers a listener for calls the caller aborted (used to cancel them across workers). */
  onCancel(listener: CancelListener): void {
    this.listeners.onCancel(listener);
  }

  /**
   * Registers a listener for every request this client sends, told in the same tick as `call`/`request`
   * takes it, before it is published. Listeners must not throw and should be quick: they run on every call.
   */
  onSend(listener: SendListener): void {
    this.listeners.onSend(listener);
  }

  /**
   * Registers a listener for every call this client settles, told how: `answered` (a reply came back:
   * a result or an error answer), `failed` on this side (no route, not confirmed, connection lost...),
   * `timeout` or `aborted`. Must not throw and should be quick: it runs on every call.
   */
  onSettle(listener: SettledListener): void {
    this.listeners.onSettle(listener);
  }

  /**
   * Calls a method and returns its result. Two families of errors: a JSON-RPC
   * error answer (the service's) is thrown as the matching JsonRpcError
   * subclass; a failure on this side (deadline, lost reply path, a bound, no
   * route...) as a LocalError (`RPC_*` code, `retryable`), whose wire
   * equivalent `toWireError` gives. docs/errors.md has both tables.
   *
   * @example await client.call('add', [4, 5]) // 9
   */
  async call<R = JsonValue>(method: string, params?: Params, opts: CallOptions = {}): Promise<R> {
    const response = await this.send(requestMessage(method, params, opts.id ?? ++this.idSeq), opts);
    if (isErrorResponse(response)) throw JsonRpcError.fromErrorObject(response.error);
    return response.result as R;
  }

  /**
   * Sends a request message as given (its id untouched) and resolves with the
   * response, errors included: local failures (deadline, no route, lost
   * connection) become error responses carrying the request's id, through
   * `toJsonRpcError` (so `toWireError` decides their code and data). For
   * gateways that relay other people's requests. Never rejects.
   */
  async request(message: RequestMessage, opts: Omit<CallOptions, 'id'> = {}): Promise<ResponseMessage> {
    try {
      return await this.send(message, opts);
    } catch (error) {
      return failureResponse(message.id, toJsonRpcError(error).toErrorObject());
    }
  }

  /** The call id (correlation id) the next call will use; lets a caller cancel or look it up by id. */
  nextCallId(): string {
    return this.ids.peek();
  }

  /**
   * Publishes an event to its subscribers, resolved once RabbitMQ confirmed it, else a LocalError (RpcNotConfirmedError...);
   * one nobody subscribes to is dropped with a warning (notify.ts, `ifUnrouted`). A job for a method's queue is `enqueue`'s.
   */
  async notify(method: string, params?: Params, opts: NotifyOptions = {}): Promise<void> {
    this.assertOpen();
    assertMethodName(method);
    return this.notes.send(method, this.encode(notificationMessage(method, params)), opts);
  }

  /**
   * Queues a job, a request nobody waits for, persistent, once RabbitMQ confirmed it (enqueue.ts, docs/jobs.md); fails as a
   * call does when no queue is bound for the method (RpcNoRouteError, -32601). `await client.enqueue('report.render', { size: 2 })`
   */
  async enqueue(method: string, params?: Params, opts: EnqueueOptions = {}): Promise<EnqueuedJob> {
    this.assertOpen();
    return this.jobs.enqueue(method, params, opts);
  }

  /** A job's state and outcome by id, from the job store (`useJobStore`; docs/jobs.md). */
  job(id: string): Promise<JobStatus> {
    return this.jobs.status(id);
  }

  /** Where `enqueue` reserves job ids (de-duplication) and `job` reads states: @warren/inflight's `inflightJobStore(view)`. */
  useJobStore(store: JobStore | undefined): void {
    this.jobs.use(store);
  }

  /** Sends every entry concurrently (each to its own service); results come back in request order. */
  async batch(entries: readonly BatchEntry[], opts: Omit<CallOptions, 'id'> = {}): Promise<BatchResult[]> {
    return Promise.allSettled(entries.map((e) => (e.notification ? this.notify(e.method, e.params, opts).then(() => undefined) : this.call(e.method, e.params, opts))));
  }

  /** A typed stand-in for a remote API: `proxy<MathApi>('math').add(1, 2)` calls `math.add` with params `[1, 2]` (proxy.ts). */
  proxy<T extends object>(prefix?: string, opts: Omit<CallOptions, 'id'> = {}): RpcProxy<T> {
    return rpcProxy<T>((method, args) => this.call(method, args, opts), prefix);
  }

  /** Stops taking calls, waits up to `closeTimeoutMs` for pending ones, fails the rest, and releases the reply queue. Idempotent. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      const until = Date.now() + this.o.closeTimeoutMs;
      while (this.pending.size > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
      this.pending.rejectAll(new RpcShuttingDownError());
      this.buffer.flush();
      this.connection.off('lost', this.onConnectionLost);
      this.unregister?.();
      const ch = this.channel;
      this.channel = undefined;
      if (ch) {
        if (this.o.replyMode === 'named') await this.probe.release(ch, this.replyQueue);
        await closeChannel(ch);
      }
      if (this.ownsConnection) await this.connection.close();
    })();
    return this.closing;
  }

  /** Registers the call and publishes it (or holds it while disconnected). Throws only for what is wrong with the call itself. */
  private send(message: RequestMessage, opts: Omit<CallOptions, 'id'>): Promise<ResponseMessage> {
    this.assertOpen();
    assertMethodName(message.method);
    const now = Date.now();
    const dueAt = dueAtOf(opts, now);
    // The deadline counts from when the call is due, unless the caller gave one of its own.
    const deadline = Math.min((dueAt ?? now) + (opts.timeoutMs ?? this.o.defaultTimeoutMs), opts.deadline ?? Number.POSITIVE_INFINITY);
    if (deadline <= (dueAt ?? now)) throw new RpcTimeoutError(true);
    const callId = this.ids.next();
    const body = this.encode(message);
    // Tracing off (no SDK registered): no span object at all, only the traceparent Warren always carries.
    const tracer = activeTracer();
    const span = tracer ? startClientSpan(tracer, { method: message.method, callId, exchange: this.n.requestExchange, id: message.id, parent: parentContext(opts.traceparent, validTracestate(opts.tracestate)) }) : undefined;
    const request: OutboundRequest = {
      callId,
      method: message.method,
      body,
      deadline,
      traceparent: span ? traceparentOf(span) : childTraceparent(parseTraceparent(opts.traceparent)),
      tracestate: span ? tracestateOf(span) : validTracestate(opts.tracestate),
      // Waiting for days, it must outlive a broker restart.
      persistent: dueAt !== undefined || (opts.persistent ?? this.o.persistent),
      progress: opts.onProgress !== undefined,
      dueAt,
    };
    const answer = this.pending.add(request.callId, { timeoutMs: deadline - now, signal: opts.signal, onSettle: this.onSettled });
    if (span) answer.then((response) => endWithResponse(span, response), (err: unknown) => endWithError(span, err));
    if (this.listeners.hearSends) this.listeners.sent({ callId: request.callId, method: message.method, id: message.id, deadline, ...(dueAt === undefined ? {} : { dueAt }) });
    // Only for a call the table took: a refused one (limit, aborted signal) never settles through onSettled.
    if (opts.onProgress && this.pending.has(request.callId)) this.listeners.listenToProgress(request.callId, opts.onProgress);
    if (this.pending.has(request.callId)) this.trust.expect(request.callId, message.method);
    // Delayed and abortable calls only (no entry per plain call): an abort's wire cancel carries the deadline (docs/protocol.md "Cancellation").
    if ((dueAt !== undefined || opts.signal !== undefined) && this.pending.has(request.callId)) this.delayedDeadlines.set(request.callId, deadline);
    const queueIfDown = (opts.whenNoConsumer ?? (request.persistent ? 'queue' : 'fail')) === 'queue';
    const verdict = queueIfDown || !this.availability ? undefined : this.availability(message.method);
    if (verdict === undefined) this.outbox.request(request);
    else void Promise.resolve(verdict).then((e) => (e ? void this.pending.reject(request.callId, e) : this.outbox.request(request)), () => this.outbox.request(request));
    return answer;
  }

  private readonly onSettled: SettleListener<string> = (outcome, callId) => {
    const wasOnWire = this.onWire.delete(callId);
    const deadline = this.delayedDeadlines.get(callId);
    if (deadline !== undefined) this.delayedDeadlines.delete(callId);
    this.trust.forget(callId);
    this.listeners.settled(callId, outcome);
    if (outcome !== 'aborted') return;
    // The worker running it (any language) hears this on NS.cancel and stops; the caller already has RpcAbortedError.
    // Published, not confirmed: nothing waits for it (the caller has its answer), so no confirms wait per abort.
    const ch = this.channel;
    if (wasOnWire && ch) {
      try {
        publishCancel(ch, this.n, { callId, reason: 'caller aborted', ...(deadline === undefined ? {} : { deadline }) });
      } catch (err) {
        this.log.debug({ err, callId }, 'cancel not published');
      }
    }
    this.listeners.cancelled(callId);
  };

  /**
   * Asks, on RabbitMQ, whichever instance runs `callId` to stop (it answers
   * its caller -32003), or, if none has taken it yet, to answer -32003
   * without running it when it arrives. Resolves once RabbitMQ has the cancel.
   */
  cancelOnWire(callId: string, reason?: string, deadline?: number): Promise<void> {
    return publishCancelConfirmed(this.channel, this.n, { callId, ...(deadline === undefined ? {} : { deadline }), ...(reason === undefined ? {} : { reason }) });
  }

  private holdOrFail(publish: () => void, fail: (err: LocalError) => void): void {
    if (this.closing) return fail(new RpcShuttingDownError());
    if (!this.buffer.hold(publish)) fail(new RpcBufferFullError(this.o.maxBuffered));
  }

  private encode(message: RequestMessage | NotificationMessage): Buffer {
    const body = Buffer.from(encodeMessage(message));
    if (body.length > this.o.maxMessageBytes) throw new RpcTooLargeError(this.o.maxMessageBytes);
    return body;
  }

  private assertOpen(): void {
    if (this.closing) throw new RpcShuttingDownError();
  }

  private async setup(model: WireModel): Promise<void> {
    // The reply queue expired while we were away, or the broker restarted (losing the plain requests and replies on the wire): their answers cannot come.
    const lost = this.o.replyMode === 'named' && this.onWire.size > 0 ? await this.probe.lost(model) : undefined;
    if (lost) this.failOnWire(lost);
    const replyQueue = this.replyQueue;
    const ch = await openClientChannel(model, {
      log: this.log,
      n: this.n,
      replyMode: this.o.replyMode,
      replyQueue,
      replyQueueExpiresMs: this.o.replyQueueExpiresMs,
      probe: this.probe,
      returned: (callId, routingKey, messageId) => {
        this.returned++;
        if (callId === undefined && messageId !== undefined) this.outbox.notificationReturned(messageId);
        // Unroutable: nobody serves the method, or its queue cannot take it now. Answer now instead of at the deadline.
        if (callId) failReturned(this.pending, callId, routingKey, this.explainReturn, this.n.namespace, this.explaining);
      },
      closed: (closed) => {
        if (this.channel !== closed) return;
        this.channel = undefined;
        if (this.o.replyMode === 'direct') this.failOnWire(new RpcConnectionLostError('reply_channel_closed'));
        // A channel closed under a live connection (not a connection loss) is rebuilt at once.
        const current = this.connection.model;
        if (current && !this.closing) this.setup(current).catch((err: unknown) => this.log.error({ err }, 'client channel rebuild failed'));
      },
      replyQueueUnavailable: (err) => {
        // Move to a new reply queue (this attempt fails; the connection's retry declares the new one); answers to what
        // was on the wire went to the old one, so those calls fail now, as they would if it had expired (tracked
        // callers recover them from the store).
        this.log.warn({ err, replyQueue }, 'reply queue unavailable (its node is down): moving to a new one');
        this.replyId = movedReplyId(this.o.clientId);
        this.failOnWire(new RpcReplyQueueLostError());
      },
      reply: (callId, response, userId) => {
        if (!this.trusted(callId, userId, 'reply')) return;
        const settled = callId !== undefined && (response instanceof RpcUnreadableReplyError ? this.pending.reject(callId, response) : this.pending.resolve(callId, response));
        if (!settled) this.lateReplies++;
      },
      progress: this.onProgress,
    });
    this.channel = ch;
    this.buffer.flush();
  }

  /** False (and logged) for a reply or progress report of a checked call from another RabbitMQ user than its service's. */
  private trusted(callId: string | undefined, userId: string | undefined, what: 'reply' | 'progress'): boolean {
    const expected = this.trust.refusal(callId, userId);
    if (expected !== undefined) this.log.warn({ callId, userId: userId ?? null, expected }, `${what} from an unexpected RabbitMQ user dropped`);
    return expected === undefined;
  }

  private readonly onProgress = (callId: string, progress: Progress, userId: string | undefined): void => {
    if (this.listeners.hearsProgress(callId) && this.trusted(callId, userId, 'progress')) this.listeners.progressed(callId, progress);
  };

  private readonly onConnectionLost = (): void => {
    this.channel = undefined;
    // Direct reply-to replies die with the connection; named-queue replies wait for us.
    if (this.o.replyMode === 'direct') this.failOnWire(new RpcConnectionLostError('connection_lost'));
  };

  private failOnWire(error: LocalError): void {
    for (const callId of [...this.onWire]) this.pending.reject(callId, error);
    this.onWire.clear();
  }
}
