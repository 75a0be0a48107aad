import type { CallOptions, NotifyOptions, RelayTarget, RpcClient } from '@warren/amqp';
import { ErrorCode, OverloadedError, failureResponse, isErrorResponse, toJsonRpcError, type Id, type RequestMessage, type ResponseMessage } from '@warren/jsonrpc';
import type { Logger } from '@warren/logger';
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
export type SettledListener = (call: GatewayCall, ms: number, code: number | undefined) => void;

export interface CallGateOptions {
  readonly client: RpcClient;
  readonly maxConcurrent: number;
  readonly metrics: BrokerMetrics;
  readonly logger: Logger;
  /** Maps a method to its metrics label; unknown methods must collapse to one value (labels come from untrusted input). */
  readonly methodLabel: (method: string) => string;
}

/**
 * Every call the gateway relays passes here, whether from POST /rpc or an
 * MCP tool: the concurrency limit (a full gate answers Overloaded at once,
 * nothing queues), one debug log line per call, a warn line per failure,
 * the metrics, and the list of calls in flight through this gateway.
 */
export class CallGate {
  private readonly running = new Map<string, GatewayCall>();
  /** The token (index) each running call was made with, for /inflight's per-token view; absent without auth. */
  private readonly owners = new Map<string, number>();
  private readonly log: Logger;
  private notifications = 0;
  private readonly settled = new Set<SettledListener>();

  constructor(private readonly o: CallGateOptions) {
    this.log = o.logger.child({ component: 'gateway-calls' });
  }

  get size(): number {
    return this.running.size;
  }

  /** Calls in flight; with `token`, only those made with that token. */
  list(token?: number): GatewayCall[] {
    const all = [...this.running.values()];
    return token === undefined ? all : all.filter((c) => this.owners.get(c.callId) === token);
  }

  /** Tells `listener` of every request the gate relayed once it is answered (the console's outcomes); returns the unsubscribe. */
  onSettled(listener: SettledListener): () => void {
    this.settled.add(listener);
    return () => this.settled.delete(listener);
  }

  /** Sends a request and resolves with its response, errors included. Never rejects. `owner`: the token it was made with. */
  async request(message: RequestMessage, via: Via, opts: Omit<CallOptions, 'id'> = {}, owner?: number): Promise<ResponseMessage> {
    if (this.full()) {
      this.refused(message.method, via, message.id);
      return failureResponse(message.id, this.overloaded().toErrorObject());
    }
    // Read in the same tick as the call takes it, so the logged id is this call's.
    const callId = this.o.client.nextCallId();
    const call: GatewayCall = { callId, method: message.method, id: message.id, via, startedAt: Date.now() };
    const started = performance.now();
    this.enter(callId, call, owner);
    let response: ResponseMessage | undefined;
    try {
      // client.request never rejects: local failures come back as error responses.
      response = await this.o.client.request(message, opts);
      return response;
    } finally {
      this.leave(callId, call);
      const code = response === undefined ? ErrorCode.InternalError : isErrorResponse(response) ? response.error.code : undefined;
      const ms = performance.now() - started;
      this.record(call, ms, code);
      for (const listener of this.settled) listener(call, ms, code);
    }
  }

  /** Publishes a notification; rejects with Overloaded when the gate is full, or with the publish failure. */
  async notify(method: string, params: RequestMessage['params'], via: Via, opts: NotifyOptions = {}, owner?: number): Promise<void> {
    if (this.full()) {
      this.refused(method, via, undefined);
      throw this.overloaded();
    }
    // Notifications have no call id of their own; this key only tells them apart here.
    const key = `notification.${(++this.notifications).toString(36)}`;
    const call: GatewayCall = { callId: key, method, via, startedAt: Date.now() };
    const started = performance.now();
    this.enter(key, call, owner);
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

  /** What relayPayload is given: `request` and `notify` passed through this gate. */
  clientFor(via: Via, owner?: number): RelayTarget {
    return {
      request: (message: RequestMessage, opts: Omit<CallOptions, 'id'> = {}): Promise<ResponseMessage> => this.request(message, via, opts, owner),
      notify: (method: string, params?: RequestMessage['params'], opts: NotifyOptions = {}): Promise<void> => this.notify(method, params, via, opts, owner),
    };
  }

  private full(): boolean {
    return this.running.size >= this.o.maxConcurrent;
  }

  private overloaded(): InstanceType<typeof OverloadedError> {
    return new OverloadedError(undefined, { reason: 'gateway_concurrency', limit: this.o.maxConcurrent });
  }

  private enter(key: string, call: GatewayCall, owner: number | undefined): void {
    this.running.set(key, call);
    if (owner !== undefined) this.owners.set(key, owner);
    this.o.metrics.inFlight.inc({ via: call.via });
  }

  private leave(key: string, call: GatewayCall): void {
    this.running.delete(key);
    this.owners.delete(key);
    this.o.metrics.inFlight.dec({ via: call.via });
  }

  /** A call turned away at the gate: counted and logged, but it took no time and has no call id. */
  private refused(method: string, via: Via, id: Id | undefined): void {
    this.o.metrics.calls.inc({ method: this.o.methodLabel(method), outcome: outcomeLabel(ErrorCode.Overloaded), via });
    this.log.warn({ method, id, via, code: ErrorCode.Overloaded, outcome: outcomeLabel(ErrorCode.Overloaded) }, 'call refused: gateway at its concurrency limit');
  }

  private record(call: GatewayCall, ms: number, code: number | undefined): void {
    const label = this.o.methodLabel(call.method);
    const outcome = outcomeLabel(code);
    this.o.metrics.calls.inc({ method: label, outcome, via: call.via });
    this.o.metrics.duration.observe({ method: label, via: call.via }, ms / 1000);
    // Never the params: they are the caller's data, and may be large or secret.
    const line = { callId: call.callId, method: call.method, id: call.id, via: call.via, outcome, ms: Math.round(ms * 10) / 10 };
    if (code === undefined) this.log.debug(line, 'call');
    else this.log.warn({ ...line, code }, 'call failed');
  }
}
