import type { CallOptions, EnqueueOptions, EnqueuedJob, NotifyOptions, RelayTarget, RpcClient } from '@warren/amqp';
import { ErrorCode, OverloadedError, UnauthorizedError, failureResponse, isErrorResponse, toJsonRpcError, type Id, type JsonValue, type RequestMessage, type ResponseMessage } from '@warren/jsonrpc';
import type { Logger } from '@warren/logger';
import { authorize, internalAsker, type Asker, type Verdict } from './authz';
import { CallOwners } from './call-owners';
import { CallSeries } from './call-series';
import type { JobCallOptions } from './job-methods';
import { outcomeLabel, type BrokerMetrics, type Via } from './metrics';

/** A call the gateway is relaying now, as GET /inflight shows it. */
export interface GatewayCall {
  readonly callId: string;
  readonly method: string;
  readonly id?: Id;
  readonly via: Via;
  readonly startedAt: number;
}

/** A relayed request's end: how long it took (ms) and its error code (undefined: a result). */
/** `response`: what the caller was answered (undefined only if relaying itself threw). */
export type SettledListener = (call: GatewayCall, ms: number, code: number | undefined, response?: ResponseMessage) => void;

export interface CallGateOptions {
  readonly client: RpcClient;
  readonly maxConcurrent: number;
  readonly metrics: BrokerMetrics;
  readonly logger: Logger;
  /** Maps a method to its metrics label; unknown methods must collapse to one value (labels come from untrusted input). */
  readonly methodLabel: (method: string) => string;
  /** How a call to a job-style method is sent (persistent, waiting for a worker); undefined for other methods. @default none */
  readonly jobOptions?: (method: string) => JobCallOptions | undefined;
}

/**
 * Every call the gateway relays passes here, whether from POST /rpc or an
 * MCP tool: the authorization rule (authz.ts: who may call which broker
 * method on whose call), the concurrency limit (a full gate answers
 * Overloaded at once, nothing queues), one debug log line per call, a warn
 * line per failure, the metrics, and the list of calls in flight through
 * this gateway with the token each was made with.
 */
export class CallGate {
  private readonly running = new Map<string, GatewayCall>();
  /** The token (index) each call was made with, for the authorization rule and /inflight's per-token view; absent without auth. */
  private readonly owners = new CallOwners();
  private readonly log: Logger;
  private notifications = 0;
  private readonly settled = new Set<SettledListener>();
  private readonly series: CallSeries;

  constructor(private readonly o: CallGateOptions) {
    this.log = o.logger.child({ component: 'gateway-calls' });
    this.series = new CallSeries(o.metrics);
  }

  get size(): number {
    return this.running.size;
  }

  /** Calls in flight; with `token`, only those made with that token. */
  list(token?: number): GatewayCall[] {
    const all = [...this.running.values()];
    return token === undefined ? all : all.filter((c) => this.owners.runningWith(c.callId, token));
  }

  /** Whether `asker` made the call (through this gateway, running or recently finished); an operator owns every call. */
  owns(asker: Asker, callId: string): boolean {
    return asker.operator || (asker.token !== undefined && this.owners.owner(callId) === asker.token);
  }

  /** The token (index) a call relayed through this gate was made with; undefined without auth, or when forgotten. */
  ownerOf(callId: string): number | undefined {
    return this.owners.owner(callId);
  }

  /** Tells `listener` of every request the gate relayed once it is answered (the console's outcomes); returns the unsubscribe. */
  onSettled(listener: SettledListener): () => void {
    this.settled.add(listener);
    return () => this.settled.delete(listener);
  }

  /** Sends a request and resolves with its response, errors included. Never rejects. `asker`: who makes it. */
  async request(message: RequestMessage, via: Via, opts: Omit<CallOptions, 'id'> = {}, asker: Asker = internalAsker): Promise<ResponseMessage> {
    const verdict = this.authorize(asker, message.method, message.params);
    if (verdict.kind === 'deny') return failureResponse(message.id, this.denied(message.method, via, verdict).toErrorObject());
    if (this.full()) {
      this.refused(message.method, via, message.id);
      return failureResponse(message.id, this.overloaded().toErrorObject());
    }
    // Read in the same tick as the call takes it, so the logged id is this call's.
    const callId = this.o.client.nextCallId();
    const call: GatewayCall = { callId, method: message.method, id: message.id, via, startedAt: Date.now() };
    const started = performance.now();
    this.enter(callId, call, asker.token);
    let response: ResponseMessage | undefined;
    try {
      // client.request never rejects: local failures come back as error responses.
      // A job-style method queues persistent for a worker (docs/protocol.md "Job-style calls may queue").
      const job = this.o.jobOptions?.(message.method);
      response = await this.o.client.request(message, job ? { ...job, ...opts } : opts);
      return verdict.kind === 'own-calls-only' ? this.ownOnly(response, asker) : response;
    } finally {
      this.leave(callId, call);
      const code = response === undefined ? ErrorCode.InternalError : isErrorResponse(response) ? response.error.code : undefined;
      const ms = performance.now() - started;
      this.record(call, ms, code);
      for (const listener of this.settled) listener(call, ms, code, response);
    }
  }

  /** Publishes a notification; rejects with Unauthorized (nothing published) or Overloaded when the gate is full, or with the publish failure. */
  async notify(method: string, params: RequestMessage['params'], via: Via, opts: NotifyOptions = {}, asker: Asker = internalAsker): Promise<void> {
    const verdict = this.authorize(asker, method, params);
    if (verdict.kind === 'deny') throw this.denied(method, via, verdict);
    if (this.full()) {
      this.refused(method, via, undefined);
      throw this.overloaded();
    }
    // Notifications have no call id of their own; this key only tells them apart here.
    const key = `notification.${(++this.notifications).toString(36)}`;
    const call: GatewayCall = { callId: key, method, via, startedAt: Date.now() };
    const started = performance.now();
    this.enter(key, call, asker.token);
    let code: number | undefined;
    try {
      await this.o.client.notify(method, params, opts);
    } catch (err) {
      code = toJsonRpcError(err).code;
      throw err;
    } finally {
      this.leave(key, call);
      this.record(call, performance.now() - started, code);
    }
  }

  /** What relayPayload is given: `request` and `notify` passed through this gate, on `asker`'s behalf. */
  clientFor(via: Via, asker: Asker = internalAsker): RelayTarget {
    return {
      request: (message: RequestMessage, opts: Omit<CallOptions, 'id'> = {}): Promise<ResponseMessage> => this.request(message, via, opts, asker),
      notify: (method: string, params?: RequestMessage['params'], opts: NotifyOptions = {}): Promise<void> => this.notify(method, params, via, opts, asker),
    };
  }

  /** The rule's refusal of a call (the -32006 error to answer), or undefined when it may go on; for doors that answer refusals their own way (MCP). */
  refusal(asker: Asker, method: string, params: unknown, via: Via): InstanceType<typeof UnauthorizedError> | undefined {
    const verdict = this.authorize(asker, method, params);
    return verdict.kind === 'deny' ? this.denied(method, via, verdict) : undefined;
  }

  private authorize(asker: Asker, method: string, params: unknown): Verdict {
    return authorize(asker, method, params, (callId) => this.owns(asker, callId));
  }

  /**
   * Enqueues a job (POST /jobs, docs/jobs.md): the rule and the gate's limit as for a call, then the broker's client
   * enqueues it, its id owned by `asker` (a client token then sees it through inflight.status). Rejects with what refused it.
   */
  async enqueue(method: string, params: RequestMessage['params'], opts: EnqueueOptions, asker: Asker): Promise<EnqueuedJob> {
    const verdict = this.authorize(asker, method, params);
    if (verdict.kind === 'deny') throw this.denied(method, 'http', verdict);
    if (this.full()) {
      this.refused(method, 'http', undefined);
      throw this.overloaded();
    }
    const key = `job.${(++this.notifications).toString(36)}`;
    const call: GatewayCall = { callId: key, method, via: 'http', startedAt: Date.now() };
    const started = performance.now();
    this.enter(key, call, asker.token);
    let code: number | undefined;
    try {
      const job = await this.o.client.enqueue(method, params, opts);
      if (asker.token !== undefined && !job.duplicate) this.owners.started(job.id, asker.token);
      this.owners.finished(job.id);
      return job;
    } catch (err) {
      code = toJsonRpcError(err).code;
      throw err;
    } finally {
      this.leave(key, call);
      this.record(call, performance.now() - started, code);
    }
  }

  /** A refusal of the rule: -32006 with `data.reason` (and the call id it was about), logged at debug; nothing is relayed. */
  private denied(method: string, via: Via, verdict: Extract<Verdict, { kind: 'deny' }>): InstanceType<typeof UnauthorizedError> {
    this.log.debug({ method, via, reason: verdict.reason, callId: verdict.callId }, 'call refused by the authorization rule');
    const data: Record<string, JsonValue> = { reason: verdict.reason, method, ...(verdict.callId === undefined ? {} : { callId: verdict.callId }) };
    const message = verdict.reason === 'operator_token_required' ? `${method} needs an operator token (GATEWAY_OPERATOR_TOKENS)`
      : verdict.reason === 'not_your_call' ? 'Not a call made with this token: a client token sees and cancels only its own calls'
        : 'callId must be a non-empty string';
    return new UnauthorizedError(message, data);
  }

  /**
   * A list of calls (an array, a page's `items`: history.list, or `calls`: delayed.list) cut down to the
   * asker's own: made through this gate, or recorded with its token as `principal` (delayed.list).
   */
  private ownOnly(response: ResponseMessage, asker: Asker): ResponseMessage {
    if (isErrorResponse(response)) return response;
    const mine = (list: JsonValue[]): JsonValue[] => list.filter((c) => typeof c === 'object' && c !== null && !Array.isArray(c) && typeof c['callId'] === 'string'
      && (this.owns(asker, c['callId']) || (asker.token !== undefined && c['principal'] === String(asker.token))));
    const result = response.result;
    if (Array.isArray(result)) return { ...response, result: mine(result) };
    if (typeof result === 'object' && result !== null && Array.isArray(result['items'])) return { ...response, result: { ...result, items: mine(result['items']) } };
    if (typeof result === 'object' && result !== null && Array.isArray(result['calls'])) return { ...response, result: { ...result, calls: mine(result['calls']) } };
    return response;
  }

  private full(): boolean {
    return this.running.size >= this.o.maxConcurrent;
  }

  private overloaded(): InstanceType<typeof OverloadedError> {
    return new OverloadedError(undefined, { reason: 'gateway_concurrency', limit: this.o.maxConcurrent });
  }

  private enter(key: string, call: GatewayCall, owner: number | undefined): void {
    this.running.set(key, call);
    if (owner !== undefined) this.owners.started(key, owner);
    this.series.inFlight(call.via).inc();
  }

  private leave(key: string, call: GatewayCall): void {
    this.running.delete(key);
    this.owners.finished(key);
    this.series.inFlight(call.via).dec();
  }

  /** A call turned away at the gate: counted and logged, but it took no time and has no call id. */
  private refused(method: string, via: Via, id: Id | undefined): void {
    this.o.metrics.calls.inc({ method: this.o.methodLabel(method), outcome: outcomeLabel(ErrorCode.Overloaded), via });
    this.log.warn({ method, id, via, code: ErrorCode.Overloaded, outcome: outcomeLabel(ErrorCode.Overloaded) }, 'call refused: gateway at its concurrency limit');
  }

  private record(call: GatewayCall, ms: number, code: number | undefined): void {
    const label = this.o.methodLabel(call.method);
    const outcome = outcomeLabel(code);
    this.series.of(label, outcome, call.via).inc();
    this.series.timing(label, call.via).observe(ms / 1000);
    // The debug line is built only when someone reads it: at the default level it would be garbage per call.
    if (code === undefined && !this.log.isLevelEnabled('debug')) return;
    // Never the params: they are the caller's data, and may be large or secret.
    const line = { callId: call.callId, method: call.method, id: call.id, via: call.via, outcome, ms: Math.round(ms * 10) / 10 };
    if (code === undefined) this.log.debug(line, 'call');
    else this.log.warn({ ...line, code }, 'call failed');
  }
}
