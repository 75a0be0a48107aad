import type { CallOptions, DelayOptions, EnqueueOptions, EnqueuedJob } from '@warren/amqp';
import type { JobState } from '@warren/calls';
import { ErrorCode, JsonRpcError, encode, notificationMessage, requestMessage, type ErrorObject, type JsonValue, type NotificationMessage, type Params, type RequestMessage } from '@warren/jsonrpc';
import type { CancelOutcome, CallStatus, InflightCall } from '@warren/inflight';
import { UnreachableError, UsageError } from './errors';

/** The gateway's default ceiling on a call's deadline (GATEWAY_MAX_TIMEOUT_MS); a call without --timeout gets the gateway's default, below it. */
const gatewayMaxTimeoutMs = 60_000;

/** What the commands call methods through: the AMQP RpcClient, or {@link GatewayCaller}. */
export interface Caller {
  call<R = JsonValue>(method: string, params?: Params, options?: Pick<CallOptions, 'timeoutMs' | 'id' | 'onProgress' | 'delayMs' | 'notBefore'>): Promise<R>;
  notify(method: string, params?: Params, options?: Pick<CallOptions, 'timeoutMs' | 'delayMs' | 'notBefore'>): Promise<void>;
  /** The call id of the next call (for --show-id). */
  nextCallId(): string;
  /** Tells every worker on the wire to cancel `callId`. */
  cancelOnWire(callId: string, reason?: string, deadline?: number): Promise<void>;
  close(): Promise<void>;
}

/** What `inflight`, `status` and `cancel` read: the Redis InflightView, or {@link GatewayView}. */
export interface ViewPort {
  list(filter?: { readonly service?: string }): Promise<InflightCall[]>;
  status(callId: string): Promise<CallStatus>;
  cancel(callId: string): Promise<CancelOutcome>;
  close(): Promise<void>;
}

/**
 * Calls through the broker's HTTP gateway (POST /rpc) instead of RabbitMQ: how the CLI reaches an
 * embedded system (one process, nothing to connect to but HTTP), or any gateway on purpose
 * (`--via gateway`). What this loses against AMQP (docs/cli.md): no progress reports (POST /rpc
 * answers once), no --show-id (the gateway picks the call id), and the deadline is capped by the
 * gateway's GATEWAY_MAX_TIMEOUT_MS.
 */
export class GatewayCaller implements Caller {
  private seq = 1;

  constructor(
    private readonly base: string,
    private readonly token: string | undefined,
    /** Added to a call's deadline: how much longer than the call itself the gateway may take to answer. */
    private readonly connectTimeoutMs: number,
  ) {}

  /** `onProgress` is not called: POST /rpc answers once, with no progress before it. */
  async call<R = JsonValue>(method: string, params?: Params, options: Pick<CallOptions, 'timeoutMs' | 'id' | 'onProgress' | 'delayMs' | 'notBefore'> = {}): Promise<R> {
    const id = options.id ?? this.seq++;
    const body = await this.post(requestMessage(method, params, id), options.timeoutMs, options);
    const response = body as { result?: unknown; error?: ErrorObject } | undefined;
    if (response?.error !== undefined) throw JsonRpcError.fromErrorObject(response.error);
    if (response === undefined || !('result' in response)) throw new JsonRpcError(ErrorCode.InternalError, 'the gateway answered no JSON-RPC response');
    return response.result as R;
  }

  async notify(method: string, params?: Params, options: Pick<CallOptions, 'timeoutMs' | 'delayMs' | 'notBefore'> = {}): Promise<void> {
    const body = (await this.post(notificationMessage(method, params), options.timeoutMs, options)) as { error?: ErrorObject } | undefined;
    if (body?.error !== undefined) throw JsonRpcError.fromErrorObject(body.error);
  }

  /** Enqueues a job through `POST /jobs` (docs/gateway.md, "POST /jobs"); a refusal comes back as its JSON-RPC error. */
  async enqueue(method: string, params: Params | undefined, options: EnqueueOptions = {}): Promise<EnqueuedJob> {
    const headers: Record<string, string> = { 'content-type': 'application/json', ...(this.token ? { authorization: `Bearer ${this.token}` } : {}) };
    if (options.timeoutMs !== undefined) headers['x-timeout-ms'] = String(options.timeoutMs);
    if (options.delayMs !== undefined) headers['x-delay-ms'] = String(options.delayMs);
    const notBefore = options.notBefore instanceof Date ? options.notBefore.getTime() : options.notBefore;
    if (notBefore !== undefined) headers['x-not-before'] = String(notBefore);
    const body = JSON.stringify({ method, ...(params === undefined ? {} : { params }), ...(options.jobId === undefined ? {} : { id: options.jobId }) });
    let response: Response;
    try {
      response = await fetch(new URL('/jobs', this.base), { method: 'POST', headers, body, signal: AbortSignal.timeout(gatewayMaxTimeoutMs + this.connectTimeoutMs) });
    } catch (err) {
      throw new UnreachableError(`the gateway at ${this.base}`, err);
    }
    const answer = (await response.json().catch(() => undefined)) as (EnqueuedJob & { state?: JobState; error?: ErrorObject }) | undefined;
    if (answer?.error !== undefined) throw JsonRpcError.fromErrorObject(answer.error);
    if (response.status !== 202 || answer === undefined || typeof answer.id !== 'string') throw new JsonRpcError(ErrorCode.InternalError, `the gateway answered HTTP ${response.status} to POST /jobs`);
    const { state, ...job } = answer;
    return state === undefined ? job : { ...job, existing: { id: job.id, state } };
  }

  nextCallId(): string {
    throw new UsageError('--show-id needs RabbitMQ (--via amqp): through the gateway, the gateway picks the call id');
  }

  /** Nothing to do: the gateway's inflight.cancel publishes the cancel on the wire itself. */
  cancelOnWire(): Promise<void> {
    return Promise.resolve();
  }

  close(): Promise<void> {
    return Promise.resolve();
  }

  /** POSTs one message; the parsed answer, or undefined for 204 (a notification). Gateway refusals come back as JSON-RPC errors. */
  private async post(message: RequestMessage | NotificationMessage, timeoutMs: number | undefined, delay: DelayOptions = {}): Promise<unknown> {
    const headers: Record<string, string> = { 'content-type': 'application/json', ...(this.token ? { authorization: `Bearer ${this.token}` } : {}) };
    if (timeoutMs !== undefined) headers['x-timeout-ms'] = String(timeoutMs);
    // The gateway's delay headers (docs/gateway.md, "Delayed calls"); a call's answer comes that much later.
    if (delay.delayMs !== undefined) headers['x-delay-ms'] = String(delay.delayMs);
    const notBefore = delay.notBefore instanceof Date ? delay.notBefore.getTime() : delay.notBefore;
    if (notBefore !== undefined) headers['x-not-before'] = String(notBefore);
    const waitMs = !('id' in message) ? 0 : Math.max(delay.delayMs ?? 0, notBefore === undefined ? 0 : notBefore - Date.now());
    // fetch resolves only when the gateway answers, and it answers a call when the call ends: so the
    // wait is bounded by the call's deadline (the gateway's maximum when none is given) plus the connect
    // timeout, never by the connect timeout alone (hanging up earlier would cancel the call there).
    const budgetMs = waitMs + (timeoutMs ?? gatewayMaxTimeoutMs) + this.connectTimeoutMs;
    let response: Response;
    try {
      response = await fetch(new URL('/rpc', this.base), { method: 'POST', headers, body: encode(message), signal: AbortSignal.timeout(budgetMs) });
    } catch (err) {
      throw new UnreachableError(`the gateway at ${this.base}`, err);
    }
    if (response.status === 204) return undefined;
    const text = await response.text();
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new JsonRpcError(ErrorCode.InternalError, `the gateway answered HTTP ${response.status} without JSON`);
    }
  }
}

/** The in-flight view through the gateway's inflight.* methods (the broker serves them over its own store). */
export class GatewayView implements ViewPort {
  constructor(private readonly caller: Caller) {}

  list(filter: { readonly service?: string } = {}): Promise<InflightCall[]> {
    return this.caller.call<InflightCall[]>('inflight.list', { ...filter });
  }

  status(callId: string): Promise<CallStatus> {
    return this.caller.call<CallStatus>('inflight.status', { callId });
  }

  cancel(callId: string): Promise<CancelOutcome> {
    return this.caller.call<CancelOutcome>('inflight.cancel', { callId });
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

/**
 * `--via auto`: true when the gateway says it fronts an embedded system (`"mode": "embedded"` in
 * GET /readyz), where there is no RabbitMQ to connect to. One local GET, only when no AMQP URL was
 * given; an absent or slow gateway means AMQP, as before.
 */
export async function gatewayIsEmbedded(base: string, timeoutMs: number): Promise<boolean> {
  try {
    const response = await fetch(new URL('/readyz', base), { signal: AbortSignal.timeout(timeoutMs) });
    const body = (await response.json()) as { mode?: unknown };
    return body.mode === 'embedded';
  } catch {
    return false;
  }
}
