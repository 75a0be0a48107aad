import type { CallInfo } from '@warren/calls';
import { closeChannel, type WireModel, type WireConfirmChannel, type WirePublishOptions, type WireConnection } from '@warren/amqp-transport';
import {
  JsonRpcError, PendingCalls, RpcAbortedError, RpcBufferFullError, RpcConnectionLostError, RpcNoRouteError, RpcNotConfirmedError,
  RpcReplyQueueLostError, RpcShuttingDownError, RpcTimeoutError, RpcTooLargeError, RpcUnreadableReplyError, failureResponse, isErrorResponse,
  notificationMessage, requestMessage, toJsonRpcError, encode as encodeMessage, type Id, type JsonValue, type LocalError, type NotificationMessage,
  type Params, type RequestMessage, type ResponseMessage, type SettleListener,
} from '@warren/jsonrpc';
import type { Logger } from '@warren/logger';
import { movedReplyId, resolveClientOptions, type ClientOptions, type ResolvedClientOptions } from './client-options';
import { Header, protocolMinor, protocolMinorHeader, protocolVersion } from '../wire/headers';
import { assertMethodName, names, type Names } from '../wire/names';
import { OfflineBuffer } from './offline-buffer';
import { CallIds } from './call-ids';
import { ReplyTrust } from './reply-users';
import { progressHeader, type Progress, type ProgressListener } from '../wire/progress';
import { consumeReplies, directReplyQueue, replyQueueExists } from './reply-consumer';
import { applyTopology, coreTopology, replyQueueOptions } from '../wire/topology';
import type { AvailabilityVerdict } from './availability-verdict';
import { publishCancel } from '../wire/wire-cancel';
import { childTraceparent, parseTraceparent, validTracestate } from '../wire/trace';
import { DelayChain } from './delay-chain';
import { dueAtOf, type DelayOptions } from './delay-options';
import { activeTracer } from '../tracing/tracer';
import { endWithError, endWithResponse, parentContext, startClientSpan, traceparentOf, tracestateOf } from '../tracing/call-spans';

export interface CallOptions extends DelayOptions {
  /** Time allowed for this call, counted from when it is due (see `delayMs`/`notBefore`). @default the client's defaultTimeoutMs */
  readonly timeoutMs?: number;
  /** An absolute deadline (ms since epoch) the call may not outlive, e.g. inherited from a parent call; must be after it is due. */
  readonly deadline?: number;
  /** Aborting settles the call with RpcAbortedError (and tells `onCancel`, which may cancel it remotely). */
  readonly signal?: AbortSignal;
  /** The JSON-RPC id to put in the body. @default a per-client counter */
  readonly id?: Exclude<Id, null>;
  /**
   * Parent trace context (W3C traceparent) the call continues. @default the active OpenTelemetry span's
   * when one is registered and active, else a new trace
   */
  readonly traceparent?: string;
  /** The W3C `tracestate` that goes with `traceparent`, carried on unchanged (dropped when malformed). @default none */
  readonly tracestate?: string;
  /** Persist this message to disk. @default the client's `persistent`; always for a delayed call */
  readonly persistent?: boolean;
  /**
   * Told of the call's progress as its handler reports it (`ctx.progress`): the request asks the
   * worker to push progress to this client's reply queue. Reports after the answer are dropped.
   * @default none (no progress is pushed)
   */
  readonly onProgress?: ProgressListener;
  /**
   * With an availability check installed: `fail` rejects at once with RpcNoConsumersError (-32002 on the
   * wire) when the service has no live consumer, `queue` leaves the request waiting for one (job-style). @default 'queue' if persistent, else 'fail'
   */
  readonly whenNoConsumer?: 'fail' | 'queue';
}

/** `timeoutMs` bounds the wait for RabbitMQ's confirm; a delayed notification is confirmed once it waits in the chain. */
export type NotifyOptions = Pick<CallOptions, 'timeoutMs' | 'traceparent' | 'tracestate' | 'persistent' | 'delayMs' | 'notBefore'>;

export type BatchEntry = { readonly method: string; readonly params?: Params; readonly notification?: boolean };
/** One entry per batch item, in request order; notifications are fulfilled with `undefined`. */
export type BatchResult = PromiseSettledResult<JsonValue | undefined>;

/** Turns an interface of async methods into one whose calls go over RabbitMQ. */
export type RpcProxy<T> = {
  [K in keyof T]: T[K] extends (...args: infer A) => infer R ? (...args: A) => Promise<Awaited<R>> : never;
};

export interface ClientStats {
  readonly pending: number;
  readonly buffered: number;
  readonly onWire: number;
  readonly lateReplies: number;
  readonly returned: number;
  /** Replies and progress dropped because they did not come from the RabbitMQ user `replyUsers` expects (forged). */
  readonly untrustedReplies: number;
}

/** A request on its way to the broker, held as one object while disconnected. */
interface OutboundRequest {
  readonly callId: string;
  readonly method: string;
  readonly body: Buffer;
  readonly deadline: number;
  readonly traceparent: string;
  readonly tracestate: string | undefined;
  readonly persistent: boolean;
  /** The caller listens for progress. */
  readonly progress: boolean;
  /** A delayed call: when it is due (ms since the epoch); it waits in the delay chain until then. */
  readonly dueAt: number | undefined;
}

/**
 * The header tables of this client's publishes, one object each, refilled
 * for every publish. amqplib makes the headers object the prototype of one
 * of its own (`Object.create(options.headers)`); a new object per publish
 * turned into a prototype costs V8 more than the rest of the publish
 * (measured: 7-8 µs against 4.4 per publish). amqplib encodes the table
 * before `publish` returns (test: amqp/publish-headers), so refilling the
 * same object for the next publish is safe.
 */
class PublishHeaders {
  private readonly request: Record<string, number | string> = { [Header.protocol]: protocolVersion, [protocolMinorHeader]: protocolMinor, [Header.deadline]: 0, [Header.traceparent]: '', [Header.sentAt]: 0 };
  private readonly event: Record<string, number | string> = { [Header.protocol]: protocolVersion, [protocolMinorHeader]: protocolMinor, [Header.traceparent]: '' };
  /** A second table for requests asking for progress, so neither table changes shape. */
  private readonly withProgress: Record<string, number | string> = { [Header.protocol]: protocolVersion, [protocolMinorHeader]: protocolMinor, [Header.deadline]: 0, [Header.traceparent]: '', [progressHeader]: 1, [Header.sentAt]: 0 };

  forRequest(deadline: number, traceparent: string, progress: boolean, tracestate: string | undefined): Record<string, number | string> {
    const table = progress ? this.withProgress : this.request;
    table[Header.deadline] = deadline;
    table[Header.traceparent] = traceparent;
    table[Header.sentAt] = Date.now();
    // A trace state is rare: a copy that carries it keeps the shared tables' shape (and their speed) for the rest.
    return tracestate === undefined ? table : { ...table, [Header.tracestate]: tracestate };
  }

  forEvent(traceparent: string, tracestate: string | undefined): Record<string, number | string> {
    this.event[Header.traceparent] = traceparent;
    return tracestate === undefined ? this.event : { ...this.event, [Header.tracestate]: tracestate };
  }
}

/** Told when a caller gives up on a call (abort), so it can be cancelled where it runs. */
export type CancelListener = (callId: string) => void;

/** A request the client has taken and is sending (or holding while disconnected): a {@link CallInfo} (@warren/calls) before any worker has it. */
export type SentCall = CallInfo;

/** Told of every request as it is sent, e.g. to record it as queued before any worker takes it. */
export type SendListener = (call: CallInfo) => void;
/** How a call settled, as {@link RpcClient.onSettle} tells it. */
export type SettledListener = (callId: string, how: 'answered' | 'failed' | 'timeout' | 'aborted') => void;
const settledHow = { resolved: 'answered', rejected: 'failed', timeout: 'timeout', aborted: 'aborted' } as const;

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
  private readonly cancelListeners: CancelListener[] = [];
  private readonly sendListeners: SendListener[] = [];
  private readonly settleListeners: SettledListener[] = [];
  private readonly headers = new PublishHeaders();
  private readonly delay: DelayChain;
  /** Deadlines of delayed calls pending, by call id: a caller's abort tells workers to remember the cancel that long. */
  private readonly delayedDeadlines = new Map<string, number>();
  /** Progress listeners of pending calls, by call id; each leaves with its call (onSettled). */
  private readonly progressListeners = new Map<string, ProgressListener>();
  private availability: ((method: string) => AvailabilityVerdict) | undefined;
  private explainReturn: ((method: string) => LocalError | undefined) | undefined;

  private constructor(private readonly connection: WireConnection, options: ClientOptions, private readonly ownsConnection: boolean) {
    this.o = resolveClientOptions(options);
    this.n = names(this.o.namespace);
    this.delay = new DelayChain(this.n);
    this.log = this.o.logger.child({ component: 'rpc-client', clientId: this.o.clientId });
    this.ids = new CallIds(this.o.clientId);
    this.replyId = this.o.clientId;
    this.trust = new ReplyTrust(this.o.replyUsers);
    this.buffer = new OfflineBuffer(this.o.maxBuffered);
    this.pending = new PendingCalls<string, ResponseMessage>({
      maxPending: this.o.maxPending,
      timeoutError: () => new RpcTimeoutError(),
      abortError: (_id, reason) => new RpcAbortedError(reason === undefined ? undefined : String(reason instanceof Error ? reason.message : reason)),
    });
  }

  /** Creates a client on a connection; `ownsConnection` makes `close()` close the connection too. */
  static async create(connection: WireConnection, options: ClientOptions = {}, ownsConnection = false): Promise<RpcClient> {
    const client = new RpcClient(connection, options, ownsConnection);
    connection.on('lost', client.onConnectionLost);
    client.unregister = await connection.onOpen((model) => client.setup(model));
    return client;
  }

  get id(): string {
    return this.o.clientId;
  }

  get namespace(): string {
    return this.n.namespace;
  }

  get replyQueue(): string {
    return this.o.replyMode === 'direct' ? directReplyQueue : this.n.replyQueue(this.replyId);
  }

  stats(): ClientStats {
    return { pending: this.pending.size, buffered: this.buffer.size, onWire: this.onWire.size, lateReplies: this.lateReplies, returned: this.returned, untrustedReplies: this.trust.dropped };
  }

  /** Installs the check that fails calls to a service without consumers (see AvailabilityGate); undefined removes it. */
  checkAvailability(check: ((method: string) => AvailabilityVerdict) | undefined): void {
    this.availability = check;
  }

  /**
   * Installs what a request RabbitMQ returned (mandatory, 312 NO_ROUTE) fails with, when it knows better than
   * RpcNoRouteError: RabbitMQ returns it alike when no queue is bound and when the bound classic queue's home
   * node is down, so only a directory of services can tell the two apart (guardAvailability installs one).
   */
  explainReturns(explain: ((method: string) => LocalError | undefined) | undefined): void {
    this.explainReturn = explain;
  }

  /** Registers a listener for calls the caller aborted (used to cancel them across workers). */
  onCancel(listener: CancelListener): void {
    this.cancelListeners.push(listener);
  }

  /**
   * Registers a listener for every request this client sends, told in the
   * same tick as `call`/`request` takes it, before it is published.
   * Listeners must not throw and should be quick: they run on every call.
   */
  onSend(listener: SendListener): void {
    this.sendListeners.push(listener);
  }

  /**
   * Registers a listener for every call this client settles, told how: `answered` (a reply came back:
   * a result or an error answer), `failed` on this side (no route, not confirmed, connection lost...),
   * `timeout` or `aborted`. Must not throw and should be quick: it runs on every call.
   */
  onSettle(listener: SettledListener): void {
    this.settleListeners.push(listener);
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
   * Publishes a notification: resolves once RabbitMQ has confirmed it, else
   * rejects with a LocalError (RpcNotConfirmedError, RpcBufferFullError...).
   * Nobody answers; a method nobody subscribes to is dropped silently.
   */
  async notify(method: string, params?: Params, opts: NotifyOptions = {}): Promise<void> {
    this.assertOpen();
    assertMethodName(method);
    const body = this.encode(notificationMessage(method, params));
    const messageId = this.ids.fresh();
    const tracer = activeTracer();
    const span = tracer ? startClientSpan(tracer, { method, callId: messageId, exchange: this.n.eventExchange, id: undefined, parent: parentContext(opts.traceparent, validTracestate(opts.tracestate)) }) : undefined;
    const traceparent = span ? traceparentOf(span) : childTraceparent(parseTraceparent(opts.traceparent));
    const tracestate = span ? tracestateOf(span) : validTracestate(opts.tracestate);
    const timeoutMs = opts.timeoutMs ?? this.o.defaultTimeoutMs;
    const dueAt = dueAtOf(opts, Date.now());
    const confirmed = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new RpcNotConfirmedError('not_confirmed_in_time')), timeoutMs);
      const settle = (err?: unknown): void => {
        clearTimeout(timer);
        if (err) reject(new RpcNotConfirmedError('not_confirmed', { cause: err }));
        else resolve();
      };
      const fail = (err: LocalError): void => {
        clearTimeout(timer);
        reject(err);
      };
      const publish = (): void => {
        const ch = this.channel;
        if (!ch) return this.holdOrFail(publish, fail);
        try {
          const props = { contentType: 'application/json', messageId, persistent: opts.persistent ?? this.o.persistent, headers: this.headers.forEvent(traceparent, tracestate) };
          if (dueAt !== undefined && dueAt > Date.now()) this.delay.publish(ch, 'event', method, body, props, dueAt, (err) => settle(err ?? undefined));
          else ch.publish(this.n.eventExchange, method, body, props, (err) => settle(err ?? undefined));
        } catch (err) {
          settle(err);
        }
      };
      publish();
    });
    if (span) confirmed.then(() => endWithResponse(span, undefined), (err: unknown) => endWithError(span, err));
    await confirmed;
  }

  /** Sends every entry concurrently (each to its own service); results come back in request order. */
  async batch(entries: readonly BatchEntry[], opts: Omit<CallOptions, 'id'> = {}): Promise<BatchResult[]> {
    return Promise.allSettled(entries.map((e) => (e.notification ? this.notify(e.method, e.params, opts).then(() => undefined) : this.call(e.method, e.params, opts))));
  }

  /**
   * A typed stand-in for a remote API: `proxy<MathApi>('math').add(1, 2)`
   * calls `math.add` with params `[1, 2]`.
   */
  proxy<T extends object>(prefix?: string, opts: Omit<CallOptions, 'id'> = {}): RpcProxy<T> {
    return new Proxy({} as RpcProxy<T>, {
      get: (_target, property) => {
        if (typeof property !== 'string' || property === 'then') return undefined;
        const method = prefix ? `${prefix}.${property}` : property;
        return (...args: JsonValue[]) => this.call(method, args, opts);
      },
    });
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
        if (this.o.replyMode === 'named') await ch.deleteQueue(this.replyQueue).catch(() => undefined);
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
    if (this.sendListeners.length > 0) this.told({ callId: request.callId, method: message.method, id: message.id, deadline, ...(dueAt === undefined ? {} : { dueAt }) });
    // Only for a call the table took: a refused one (limit, aborted signal) never settles through onSettled.
    if (opts.onProgress && this.pending.has(request.callId)) this.progressListeners.set(request.callId, opts.onProgress);
    if (this.pending.has(request.callId)) this.trust.expect(request.callId, message.method);
    if (dueAt !== undefined && this.pending.has(request.callId)) this.delayedDeadlines.set(request.callId, deadline);
    const queueIfDown = (opts.whenNoConsumer ?? (request.persistent ? 'queue' : 'fail')) === 'queue';
    const verdict = queueIfDown || !this.availability ? undefined : this.availability(message.method);
    if (verdict === undefined) this.publishRequest(request);
    else void Promise.resolve(verdict).then((e) => (e ? void this.pending.reject(request.callId, e) : this.publishRequest(request)), () => this.publishRequest(request));
    return answer;
  }

  private told(call: CallInfo): void {
    for (const listener of this.sendListeners) {
      try {
        listener(call);
      } catch (err) {
        // A listener's bug must not fail the call it was told about.
        this.log.warn({ err, callId: call.callId }, 'send listener threw');
      }
    }
  }

  private readonly onSettled: SettleListener<string> = (outcome, callId) => {
    const wasOnWire = this.onWire.delete(callId);
    if (this.progressListeners.size > 0) this.progressListeners.delete(callId);
    const deadline = this.delayedDeadlines.get(callId);
    if (deadline !== undefined) this.delayedDeadlines.delete(callId);
    this.trust.forget(callId);
    if (this.settleListeners.length > 0) for (const listener of this.settleListeners) listener(callId, settledHow[outcome]);
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
    for (const listener of this.cancelListeners) listener(callId);
  };

  /**
   * Asks, on RabbitMQ, whichever instance runs `callId` to stop (it answers
   * its caller -32003), or, if none has taken it yet, to answer -32003
   * without running it when it arrives. Resolves once RabbitMQ has the cancel.
   */
  cancelOnWire(callId: string, reason?: string, deadline?: number): Promise<void> {
    const ch = this.channel;
    if (!ch) return Promise.reject(new RpcConnectionLostError('not_connected'));
    try {
      publishCancel(ch, this.n, { callId, ...(deadline === undefined ? {} : { deadline }), ...(reason === undefined ? {} : { reason }) });
    } catch (err) {
      return Promise.reject(new RpcNotConfirmedError('publish_failed', { cause: err }));
    }
    // A nack or a channel closed before the confirm: RabbitMQ may not have the cancel (sending it again is harmless).
    return ch.waitForConfirms().catch((err: unknown) => Promise.reject(new RpcNotConfirmedError('not_confirmed', { cause: err })));
  }

  private publishRequest(request: OutboundRequest): void {
    const { callId } = request;
    if (!this.pending.has(callId)) return; // timed out or aborted while held
    const ch = this.channel;
    if (!ch) return this.holdOrFail(() => this.publishRequest(request), (err) => this.pending.reject(callId, err));
    const remaining = request.deadline - Date.now();
    if (remaining <= 0) return void this.pending.reject(callId, new RpcTimeoutError());
    const props: WirePublishOptions = {
      mandatory: true,
      contentType: 'application/json',
      correlationId: callId,
      replyTo: this.replyQueue,
      // The queue drops a request nobody took before its deadline.
      expiration: String(remaining),
      persistent: request.persistent,
      headers: this.headers.forRequest(request.deadline, request.traceparent, request.progress, request.tracestate),
    };
    this.onWire.add(callId);
    const confirmed = (err: unknown): void => {
      // Confirms are handled as they come: no call waits for its confirm before the next publish.
      if (!err) return;
      // amqplib fails unconfirmed publishes before our own 'close' listener runs; by the next
      // microtask we know whether the channel died. A nack on a live channel means the broker
      // refused it (it never ran); a publish lost with its channel may or may not have arrived.
      queueMicrotask(() => {
        const failure = this.channel === ch
          ? new RpcNotConfirmedError('not_confirmed', { cause: err })
          : new RpcConnectionLostError('unconfirmed_at_disconnect', { cause: err });
        this.pending.reject(callId, failure);
      });
    };
    try {
      if (request.dueAt !== undefined && request.dueAt > Date.now()) this.delay.publish(ch, 'call', request.method, request.body, props, request.dueAt, confirmed);
      else ch.publish(this.n.requestExchange, request.method, request.body, props, confirmed);
    } catch (err) {
      this.pending.reject(callId, new RpcNotConfirmedError('publish_failed', { cause: err }));
    }
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
    if (this.o.replyMode === 'named' && this.onWire.size > 0 && !(await replyQueueExists(model, this.replyQueue))) {
      // The reply queue expired while we were away: answers to what was on the wire are gone.
      this.failOnWire(new RpcReplyQueueLostError());
    }
    const ch = await model.createConfirmChannel();
    ch.on('error', (err: Error) => this.log.warn({ err }, 'client channel error'));
    ch.on('return', (msg) => {
      const callId = msg.properties.correlationId as string | undefined;
      this.returned++;
      // No queue is bound for this method: nobody serves it. Answer now instead of at the deadline.
      if (callId) this.pending.reject(callId, this.explainReturn?.(msg.fields.routingKey) ?? new RpcNoRouteError(msg.fields.routingKey));
    });
    ch.on('close', () => {
      if (this.channel !== ch) return;
      this.channel = undefined;
      if (this.o.replyMode === 'direct') this.failOnWire(new RpcConnectionLostError('reply_channel_closed'));
      // A channel closed under a live connection (not a connection loss) is rebuilt at once.
      const current = this.connection.model;
      if (current && !this.closing) this.setup(current).catch((err: unknown) => this.log.error({ err }, 'client channel rebuild failed'));
    });
    await applyTopology(ch, coreTopology(this.n));
    if (this.o.replyMode === 'named') {
      // Durable with x-expires, never transient non-exclusive (RabbitMQ 4.3 refuses those): it outlives a reconnect
      // (not exclusive) and goes by itself once nobody has consumed it for replyQueueExpiresMs.
      await ch.assertQueue(this.replyQueue, replyQueueOptions(this.o.replyQueueExpiresMs)).catch((err: unknown) => {
        // 404 on a declare: a durable queue whose home node is down (a cluster) cannot be declared, nor used, until
        // that node returns. Move to a new reply queue (this attempt fails; the connection's retry declares the new
        // one); answers to what was on the wire went to the old one, so those calls fail now, as they would if it
        // had expired (tracked callers recover them from the store).
        if ((err as { code?: unknown }).code === 404) {
          this.log.warn({ err, replyQueue: this.replyQueue }, 'reply queue unavailable (its node is down): moving to a new one');
          this.replyId = movedReplyId(this.o.clientId);
          this.failOnWire(new RpcReplyQueueLostError());
        }
        throw err;
      });
    }
    await consumeReplies(ch, this.replyQueue, (callId, response, userId) => {
      if (!this.trusted(callId, userId, 'reply')) return;
      const settled = callId !== undefined && (response instanceof RpcUnreadableReplyError ? this.pending.reject(callId, response) : this.pending.resolve(callId, response));
      if (!settled) this.lateReplies++;
    }, { ack: this.o.replyMode === 'named', progress: this.onProgress });
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
    const listener = this.progressListeners.get(callId);
    if (!listener || !this.trusted(callId, userId, 'progress')) return;
    try {
      listener(progress);
    } catch (err) {
      // A listener's bug must not fail the call it listens to.
      this.log.warn({ err, callId }, 'progress listener threw');
    }
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
