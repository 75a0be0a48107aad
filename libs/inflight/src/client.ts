import type { CallInfo } from '@warren/calls';
import { ErrorCode, JsonRpcError, isErrorResponse, wireErrorOf, type Id, type JsonValue, type Params } from '@warren/jsonrpc';
import type { Logger } from '@warren/logger';
import type { CancelOutcome, InflightView } from './view';

/** What {@link callWithRecovery} needs of a call's options (@warren/amqp's CallOptions has them). */
export interface RecoverableCallOptions {
  readonly timeoutMs?: number;
  readonly deadline?: number;
  readonly signal?: AbortSignal;
  readonly id?: Exclude<Id, null>;
}

/**
 * The part of a client (@warren/amqp's RpcClient) these helpers use, so this
 * package needs no AMQP: told of calls sent and given up, and able to call.
 */
export interface CallerHooks {
  onCancel(listener: (callId: string) => void): void;
  onSend(listener: (call: CallInfo) => void): void;
  onSettle(listener: (callId: string, how: 'answered' | 'failed' | 'timeout' | 'aborted') => void): void;
  nextCallId(): string;
  call<R = JsonValue>(method: string, params?: Params, opts?: RecoverableCallOptions): Promise<R>;
}

/**
 * Makes a caller's abort cancel the call where it runs: when a call made with
 * `signal` is aborted, the client settles it with CancelledError at once and
 * this tells the cluster, so the worker's handler is aborted too (or, if it
 * has not started, never starts).
 *
 * @example
 * cancelOnAbort(client, view);
 * const ac = new AbortController();
 * const p = client.call('slow', [], { signal: ac.signal });
 * ac.abort(); // p rejects with CancelledError; the handler's ctx.signal fires on its worker
 */
export function cancelOnAbort(client: Pick<CallerHooks, 'onCancel'>, view: Pick<InflightView, 'cancel'>, log?: Logger): void {
  client.onCancel((callId) => {
    view.cancel(callId).then(
      (outcome: CancelOutcome) => log?.debug({ callId, outcome: outcome.outcome }, 'call cancelled across the cluster'),
      (err: unknown) => log?.warn({ err, callId }, 'cancel not recorded (in-flight store unavailable)'),
    );
  });
}

/**
 * Makes the calls this client sends show as `queued` in the in-flight view
 * (`status`, `list`, the console's In flight, `warren status`) until a worker
 * takes them, instead of `unknown`: every call still unanswered `markAfterMs`
 * after it was sent. A call answered sooner (most, on a cluster keeping up)
 * costs Redis nothing; one marked costs two Redis writes on the caller's side
 * (the mark and its place in the queued list), and the worker's claim of it
 * reads the record before replacing it and drops it from the list. A call
 * answered while its mark is still there (a worker without a tracker
 * answered it), or failed on the caller's side (no route, not confirmed,
 * connection lost), has its mark dropped, unless `untrackedAnswers: false`
 * says none can be. A failed write is logged and the call goes on.
 *
 * @example
 * trackQueued(client, view);
 * const id = client.nextCallId();
 * const p = client.call('slow', []);
 * await view.status(id); // { state: 'queued', method: 'slow', attempt: 0, ... } from 100 ms on, until a worker takes it
 */
export function trackQueued(client: Pick<CallerHooks, 'onSend' | 'onSettle'>, view: Pick<InflightView, 'markQueued' | 'unmarkQueued'>, log?: Logger, options: TrackQueuedOptions = {}): QueuedMarks {
  const markAfterMs = options.markAfterMs ?? defaultMarkAfterMs;
  const dropsMarks = options.untrackedAnswers !== false;
  const marks = new Map<string, Promise<boolean>>();
  // Unmarks on their way: a short-lived caller (`warren call`) waits for them before it closes Redis.
  const unmarks = new Set<Promise<unknown>>();
  // Calls sent and not marked yet, oldest first (a Map keeps its insertion order), with when they went.
  const waiting = new Map<string, { readonly call: CallInfo; readonly sentAt: number }>();
  let timer: NodeJS.Timeout | undefined;
  const mark = (call: CallInfo): void => {
    const marked = view.markQueued(call).catch((err: unknown) => {
      log?.debug({ err, callId: call.callId }, 'call not marked queued (in-flight store unavailable)');
      return false;
    });
    if (dropsMarks) marks.set(call.callId, marked);
  };
  // One timer for every call waiting: it marks those due and sleeps until the oldest of the rest is.
  const sweep = (): void => {
    timer = undefined;
    const now = Date.now();
    for (const [callId, entry] of waiting) {
      if (entry.sentAt + markAfterMs > now) return arm(entry.sentAt + markAfterMs - now);
      waiting.delete(callId);
      mark(entry.call);
    }
  };
  const arm = (ms: number): void => {
    timer = setTimeout(sweep, ms);
    // Marks are for others to see: they never keep a caller's process alive.
    timer.unref();
  };
  client.onSend((call) => {
    if (options.mark?.(call) === false) return;
    if (markAfterMs <= 0) return mark(call);
    waiting.set(call.callId, { call, sentAt: Date.now() });
    if (timer === undefined) arm(markAfterMs);
  });
  const flush = (timeoutMs = 1000): Promise<void> => {
    const pending = [...marks.values(), ...unmarks];
    if (pending.length === 0) return Promise.resolve();
    let bound: NodeJS.Timeout | undefined;
    const late = new Promise<void>((resolve) => (bound = setTimeout(resolve, timeoutMs)));
    return Promise.race([Promise.allSettled(pending).then(() => undefined), late]).finally(() => clearTimeout(bound));
  };
  client.onSettle((callId, how) => {
    // Settled before its mark was due: nothing was written, nothing to drop.
    if (waiting.delete(callId)) return;
    const marked = marks.get(callId);
    if (marked === undefined) return;
    marks.delete(callId);
    // An answer: a worker ran it (a tracked one replaced the mark already). A failure on this side (no
    // route, not confirmed, connection lost): this caller waits no more. A timeout leaves the mark to
    // read `expired`, an abort its cancel.
    if (how !== 'answered' && how !== 'failed') return;
    const unmark = marked.then((yes) => (yes ? view.unmarkQueued(callId) : undefined)).catch((err: unknown) => log?.debug({ err, callId }, 'queued mark not dropped (in-flight store unavailable)'));
    unmarks.add(unmark);
    void unmark.finally(() => unmarks.delete(unmark));
  });
  return { flush };
}

/**
 * How long a call waits unanswered before {@link trackQueued} marks it. Short beside anything a person
 * watches (the console's In flight refreshes every second or so), long beside a call a cluster keeping
 * up answers (a few milliseconds): those, most calls, then cost Redis nothing.
 */
const defaultMarkAfterMs = 100;

/** What {@link trackQueued} gives back. */
export interface QueuedMarks {
  /** Resolves once the marks and unmarks sent so far are written (or `timeoutMs` passed): call it before closing the view. @default timeoutMs 1000 */
  flush(timeoutMs?: number): Promise<void>;
}

/** Which calls {@link trackQueued} marks, when, and whether it looks after answers from untracked workers. */
export interface TrackQueuedOptions {
  /** Marks only the calls this says yes to (the broker leaves out its own methods, which no tracked worker serves). @default every call */
  readonly mark?: (call: CallInfo) => boolean;
  /** Marks a call once it has waited this long unanswered; 0 marks every call as it is sent. @default 100 */
  readonly markAfterMs?: number;
  /**
   * Whether a worker without a tracker may answer these calls, so an answered call's mark is dropped
   * (two more Redis commands per answered call). `false` when every service called is tracked, or the
   * caller drops those marks itself (the broker's gateway does, for the services it knows are untracked).
   * @default true
   */
  readonly untrackedAnswers?: boolean;
}

/** The call's own options (whatever the client takes: `O`), and these. */
export interface RecoveryOptions {
  /** How long to wait for the stored outcome after the reply was lost. @default the call's timeoutMs, else 30000 */
  readonly recoverWithinMs?: number;
  /** How often to look for it. @default 100 */
  readonly pollMs?: number;
}

/**
 * `client.call`, except that a reply lost on the way back (what answers
 * -32007 Connection lost on the wire: RpcConnectionLostError or
 * RpcReplyQueueLostError locally, the connection or the reply queue went
 * away while the call ran) is recovered from the in-flight store by call id
 * instead of failing: the worker stored the outcome before replying. If no
 * outcome turns up in time (the request itself was lost), the call's error is
 * thrown as before.
 *
 * @example
 * const sum = await callWithRecovery<number>(client, view, 'add', [4, 5]);
 */
export async function callWithRecovery<R = JsonValue, O extends RecoverableCallOptions = RecoverableCallOptions>(
  client: CallerHooks, view: Pick<InflightView, 'waitForResult'>, method: string, params?: Params, opts: O & RecoveryOptions = {} as O & RecoveryOptions,
): Promise<R> {
  const { recoverWithinMs, pollMs, ...callOptions } = opts;
  // The call id is taken synchronously by `call`, so nothing can come in between. An explicit
  // JSON-RPC id keeps `call` from taking a second number from the client's counter for the body.
  const callId = client.nextCallId();
  try {
    return await client.call<R>(method, params, { ...callOptions, id: callOptions.id ?? callId } as RecoverableCallOptions);
  } catch (err) {
    // By wire code, so a -32007 relayed from elsewhere (a gateway's client) is recovered the same way.
    if (wireErrorOf(err)?.code !== ErrorCode.ConnectionLost) throw err;
    const waitMs = recoverWithinMs ?? Math.max(1, Math.min(opts.timeoutMs ?? 30_000, (opts.deadline ?? Number.POSITIVE_INFINITY) - Date.now()));
    const response = await view.waitForResult(callId, { timeoutMs: waitMs, ...(pollMs === undefined ? {} : { pollMs }), ...(opts.signal ? { signal: opts.signal } : {}) }).catch(() => undefined);
    if (!response) throw err;
    if (isErrorResponse(response)) throw JsonRpcError.fromErrorObject(response.error);
    return response.result as R;
  }
}
