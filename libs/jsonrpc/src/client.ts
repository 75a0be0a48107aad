import { decode } from './decode';
import { encode, notificationMessage, requestMessage } from './encode';
import { CancelledError, DeadlineExceededError, JsonRpcError, ShuttingDownError } from './errors';
import { PendingCalls } from './pending';
import type { Id, JsonValue, Params, RequestMessage, NotificationMessage, ResponseMessage } from './types';
import { isErrorResponse } from './types';

/**
 * Sends one encoded payload. A transport that gets the answer back directly
 * (HTTP) may return it; one that gets answers later (a socket) calls
 * `client.receive()` instead and returns nothing.
 */
export type SendFunction = (payload: string) => Promise<string | void> | string | void;

export interface JsonRpcClientOptions {
  readonly send: SendFunction;
  /** Deadline for calls that set none. @default 30000 */
  readonly defaultTimeoutMs?: number;
  /** Most calls waiting at once. @default 10000 */
  readonly maxPending?: number;
}

export interface CallOptions {
  /** @default the client's defaultTimeoutMs */
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
  /** Use this id instead of the next allocated one. */
  readonly id?: Exclude<Id, null>;
}

export type BatchEntry = { readonly method: string; readonly params?: Params; readonly notification?: boolean };

/** One entry per batch item, in request order; notifications are fulfilled with `undefined`. */
export type BatchResult = PromiseSettledResult<JsonValue | undefined>;

/**
 * A transport-free JSON-RPC client: allocates ids, keeps the pending-call
 * table, matches responses (batch responses in any order) and fails everything
 * pending on close.
 */
export class JsonRpcClient {
  private nextId = 1;
  private closed = false;
  private readonly pending: PendingCalls<Id, ResponseMessage>;
  private readonly defaultTimeoutMs: number;
  /** Replies nobody waited for (late, duplicate or unknown ids). */
  unmatchedResponses = 0;

  constructor(private readonly options: JsonRpcClientOptions) {
    this.defaultTimeoutMs = options.defaultTimeoutMs ?? 30_000;
    this.pending = new PendingCalls<Id, ResponseMessage>({
      ...(options.maxPending === undefined ? {} : { maxPending: options.maxPending }),
      timeoutError: () => new DeadlineExceededError(),
      abortError: (_id, reason) => new CancelledError(undefined, reasonText(reason)),
    });
  }

  get pendingCount(): number {
    return this.pending.size;
  }

  async call<R = JsonValue>(method: string, params?: Params, opts: CallOptions = {}): Promise<R> {
    const id = opts.id ?? this.nextId++;
    const response = this.expect(id, opts);
    // Not awaited: a transport that answers inline (HTTP) resolves `send` only with the answer, and
    // the call must still end at its deadline or abort. A send failure rejects the pending entry.
    void this.transmit(requestMessage(method, params, id), [id]).catch(() => undefined);
    return unwrap(await response) as R;
  }

  async notify(method: string, params?: Params): Promise<void> {
    this.assertOpen();
    await this.transmit(notificationMessage(method, params), []);
  }

  /** Sends one batch payload; answers come back in request order whatever order the server used. */
  async batch(entries: readonly BatchEntry[], opts: Omit<CallOptions, 'id'> = {}): Promise<BatchResult[]> {
    const ids: Id[] = [];
    const messages: (RequestMessage | NotificationMessage)[] = [];
    const waits: (Promise<ResponseMessage> | undefined)[] = [];
    for (const entry of entries) {
      if (entry.notification) {
        messages.push(notificationMessage(entry.method, entry.params));
        waits.push(undefined);
      } else {
        const id = this.nextId++;
        ids.push(id);
        messages.push(requestMessage(entry.method, entry.params, id));
        waits.push(this.expect(id, opts));
      }
    }
    void this.transmit(messages, ids).catch(() => undefined);
    return Promise.allSettled(waits.map(async (wait) => (wait === undefined ? undefined : unwrap(await wait))));
  }

  /** Feeds answers in: text, bytes, or already-decoded responses. Unknown ids are counted and dropped. */
  receive(payload: string | Uint8Array | ResponseMessage | readonly ResponseMessage[], sentIds: readonly Id[] = []): void {
    for (const response of toResponses(payload)) {
      if (response.id === null && isErrorResponse(response)) {
        // The server could not read our ids (parse error, invalid batch): it applies to everything in that payload.
        const error = JsonRpcError.fromErrorObject(response.error);
        let matched = 0;
        for (const id of sentIds) if (this.pending.reject(id, error)) matched++;
        if (matched === 0) this.unmatchedResponses++;
      } else if (!this.pending.resolve(response.id, response)) {
        this.unmatchedResponses++;
      }
    }
  }

  /** Fails every pending call and refuses new ones. Idempotent. */
  close(reason: Error = new ShuttingDownError()): void {
    this.closed = true;
    this.pending.rejectAll(reason);
  }

  private expect(id: Id, opts: Omit<CallOptions, 'id'>): Promise<ResponseMessage> {
    if (this.closed) return Promise.reject(new ShuttingDownError());
    return this.pending.add(id, { timeoutMs: opts.timeoutMs ?? this.defaultTimeoutMs, signal: opts.signal });
  }

  private async transmit(message: RequestMessage | NotificationMessage | (RequestMessage | NotificationMessage)[], ids: readonly Id[]): Promise<void> {
    try {
      const answer = await this.options.send(encode(message));
      if (typeof answer === 'string' && answer.length > 0) this.receive(answer, ids);
    } catch (error) {
      const failure = error instanceof Error ? error : new Error(String(error));
      for (const id of ids) this.pending.reject(id, failure);
      throw failure;
    }
  }

  private assertOpen(): void {
    if (this.closed) throw new ShuttingDownError();
  }
}

function unwrap(response: ResponseMessage): JsonValue {
  if (isErrorResponse(response)) throw JsonRpcError.fromErrorObject(response.error);
  return response.result;
}

function toResponses(payload: string | Uint8Array | ResponseMessage | readonly ResponseMessage[]): ResponseMessage[] {
  if (typeof payload !== 'string' && !(payload instanceof Uint8Array)) return Array.isArray(payload) ? [...(payload as readonly ResponseMessage[])] : [payload as ResponseMessage];
  const decoded = decode(payload);
  switch (decoded.kind) {
    case 'rejected':
      return [];
    case 'single':
      return decoded.item.kind === 'response' ? [decoded.item.message] : [];
    case 'batch':
      return decoded.items.flatMap((item) => (item.kind === 'response' ? [item.message] : []));
  }
}

function reasonText(reason: unknown): JsonValue | undefined {
  if (reason === undefined) return undefined;
  return { reason: reason instanceof Error ? reason.message : String(reason) };
}
