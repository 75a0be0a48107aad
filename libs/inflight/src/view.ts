import { decodeProgress, type CallInfo } from '@warren/calls';
import { idText, type ResponseMessage } from '@warren/jsonrpc';
import type { Logger } from '@warren/logger';
import { decodeMeta, encodeMeta, maxListedCalls, parseStoredId, toCallStatus, type CallProgress, type CallState, type CallStatus, type WorkerInfo } from './record-codec';
import { readHistory, relayedRecord, type HistoryItem, type HistoryPage, type HistoryQuery, type RelayedOutcome } from './history';
import { InflightClosedError, InflightUnavailableError, ResultTimeoutError } from './errors';
import { callTtlMs, cancelMarkTtlMs, keys } from './keys';
import { resolveViewOptions, type ResolvedViewOptions, type ViewOptions } from './options';
import { DelayedCalls } from './delayed';
import { sleep } from './sleep';
import { RedisStore } from './redis-store';
import type { ViewStore } from './store-port';
import type { WaitingList } from './store-port';

/**
 * One call in flight somewhere in the cluster: running on a live worker, or waiting in a delay queue
 * for its next attempt: a {@link CallInfo} whose worker is known, and what the store adds. Flattened
 * into one object type, so it fits ports with an index signature (the broker's InflightSource).
 */
export type InflightCall = { readonly [K in keyof ListedCall]: ListedCall[K] };

type ListedCall = CallInfo & {
  /**
   * `running` on `worker`; `retrying`: its last attempt failed retryably or lost its worker, and the next
   * is due at `nextTryAt`; `queued`: sent by a caller that marks its calls (trackQueued) and waiting in
   * RabbitMQ for a worker (attempt 0, no worker, `startedAt` when it was sent).
   */
  readonly state: 'running' | 'retrying' | 'queued';
  readonly service: string;
  /** The worker instance running it (running), or the one that ran its last attempt (retrying). */
  readonly worker: string;
  /** The attempt running (running), or the one that ran last (retrying: the next is attempt + 1). */
  readonly attempt: number;
  /** Since when this attempt runs (or the last one started), ms since the epoch (Redis clock). */
  readonly startedAt: number;
  /** Milliseconds since `startedAt`. */
  readonly ageMs: number;
  /** When the worker's lease runs out unless renewed (Redis clock); running calls only. */
  readonly leaseUntil?: number;
  /** When a retrying call's next attempt is due, ms since the epoch. */
  readonly nextTryAt?: number;
  readonly cancelRequested: boolean;
  /** The latest progress its handler reported (`ctx.progress`), if any. */
  readonly progress?: CallProgress;
};

/** A call its caller has sent, as {@link InflightView.markQueued} records it (`service` when the caller knows it). */
export type QueuedCall = CallInfo;

/** What a cancel did. */
export type CancelOutcome =
  /** Running: its worker was told and aborts the handler's signal; the caller gets CancelledError. */
  | { readonly outcome: 'signalled'; readonly worker: string }
  /** Not started (queued, or given back): whichever worker takes it answers CancelledError without running it. */
  | { readonly outcome: 'marked' }
  | { readonly outcome: 'already-cancelled' }
  /** Too late: it finished (`state` says how). */
  | { readonly outcome: 'finished'; readonly state: string };

/** An attempt of a call that a later one replaced. */
export interface PastAttempt {
  readonly attempt: number;
  readonly worker: string;
  readonly startedAt: number;
  /** When the claim that replaced it was made (for `lost`: when its lease was found run out). */
  readonly endedAt: number;
  /** `lost`: its worker died or stalled past its lease; `retried`: it failed retryably and waited for the next; `released`: its worker shut down and gave it back. */
  readonly outcome: 'lost' | 'retried' | 'released';
}

/** The attempts list's entries that parse, oldest first. */
function parseAttempts(raw: readonly string[]): PastAttempt[] {
  return raw.flatMap((text) => {
    try {
      const a = JSON.parse(text) as PastAttempt;
      return typeof a.attempt === 'number' && typeof a.worker === 'string' ? [a] : [];
    } catch {
      return [];
    }
  });
}

/** One call as {@link InflightView.call} tells it. */
export type CallDetail = CallStatus & {
  /** Its earlier attempts (a takeover, a retry, a call given back), oldest first; the current or last one is the status itself. */
  readonly attempts: readonly PastAttempt[];
  /** Its last progress reports (at most `progressLogEntries`, keys.ts), oldest first, every attempt's. */
  readonly progressLog: readonly CallProgress[];
  /** Its entry in the outcome history, once finished (and kept there). */
  readonly history?: HistoryItem;
};

const terminal: ReadonlySet<CallState> = new Set<CallState>(['done', 'failed', 'cancelled', 'expired']);

/**
 * The cluster-wide view of in-flight calls, for operators and callers: list
 * what runs, look a call up by id (state and stored outcome), cancel it, list
 * live workers. Talks to Redis only; needs no RabbitMQ.
 *
 * @example
 * const view = new InflightView({ redis: 'redis://127.0.0.1:6379' });
 * for (const c of await view.list()) console.log(c.method, c.worker, c.ageMs);
 * await view.cancel(callId); // the caller gets CancelledError (-32003)
 * await view.close();
 */
export class InflightView {
  private readonly o: ResolvedViewOptions;
  private readonly log: Logger;
  private readonly store: ViewStore;
  private closed = false;

  /** `store`: where the records are; by default Redis as `options.redis` says (a `MemoryInflightStore` handle in embedded mode). */
  constructor(options: ViewOptions = {}, store?: ViewStore) {
    this.o = resolveViewOptions(options);
    this.log = this.o.logger.child({ component: 'inflight-view' });
    this.store = store ?? new RedisStore(this.o.redis, this.o.commandTimeoutMs, keys(this.o.keyPrefix), this.log);
    this.delayed = new DelayedCalls(this.store, (callId, opts) => this.cancel(callId, opts), this.o.graceMs);
  }

  /** Delayed calls recorded by their senders (delayed.ts): listed until due, cancelled by id. */
  readonly delayed: DelayedCalls<CancelOutcome>;

  /**
   * Calls in flight, oldest first: those running now on live workers, those waiting in a delay queue
   * for their next attempt (`retrying`), and those their callers marked queued (trackQueued) that no
   * worker has taken yet (`queued`). `service` narrows it to one service.
   */
  async list(filter: { readonly service?: string } = {}): Promise<InflightCall[]> {
    return this.op(async () => {
      const [{ now, workers }, retrying, queued] = await Promise.all([this.store.workers(), this.store.waitingCalls('retrying', maxListedCalls), this.store.waitingCalls('queued', maxListedCalls)]);
      const running = new Set(workers.filter((w) => filter.service === undefined || w.service === filter.service).flatMap((w) => w.calls));
      // One GET per call, sent together (auto-pipelined): one round trip.
      const records = await Promise.all([...new Set([...running, ...retrying, ...queued])].map(async (id) => {
        const record = await this.store.record(id);
        return { status: toCallStatus(id, record, now), id: parseStoredId(decodeMeta(record['meta']).rid) };
      }));
      // Listed as waiting and since taken, finished, cancelled or forgotten: dropped from its list for good.
      await Promise.all([this.unlistLeft('retrying', retrying, records, 'retrying'), this.unlistLeft('queued', queued, records, 'queued')]);
      const inList = (s: CallStatus): boolean => filter.service === undefined || s.service === filter.service;
      return records
        .filter(({ status: s }) => (s.state === 'running' && running.has(s.callId)) || ((s.state === 'retrying' || s.state === 'queued') && inList(s)))
        .map(({ status: s, id }): InflightCall => ({
          callId: s.callId,
          id,
          state: s.state === 'retrying' || s.state === 'queued' ? s.state : 'running',
          service: s.service ?? '',
          method: s.method ?? '',
          worker: s.worker ?? '',
          attempt: s.attempt ?? 1,
          startedAt: s.startedAt ?? now,
          ageMs: now - (s.startedAt ?? now),
          deadline: s.deadline ?? 0,
          ...(s.leaseUntil === undefined ? {} : { leaseUntil: s.leaseUntil }),
          ...(s.nextTryAt === undefined ? {} : { nextTryAt: s.nextTryAt }),
          cancelRequested: s.cancelRequested,
          ...(s.progress === undefined ? {} : { progress: s.progress }),
        }))
        .sort((a, b) => a.startedAt - b.startedAt);
    });
  }

  /** Drops from a waiting list the listed calls whose record left `state` (a worker took it, it finished, or it was forgotten). */
  private async unlistLeft(list: WaitingList, listed: readonly string[], records: readonly { readonly status: CallStatus }[], state: CallState): Promise<void> {
    const ids = new Set(listed);
    const gone = records.filter(({ status: s }) => ids.has(s.callId) && s.state !== state && (list === 'queued' || terminal.has(s.state) || s.state === 'unknown')).map(({ status: s }) => s.callId);
    if (gone.length > 0) await this.store.unlistWaiting(list, gone);
  }

  /** One call's state and, once finished, its outcome. `unknown` when Redis has no record of it. */
  async status(callId: string): Promise<CallStatus> {
    return this.op(async () => toCallStatus(callId, await this.store.record(callId), Date.now()));
  }

  /**
   * Finished calls, newest first, from the outcome history (kept by the workers' finish: the last
   * successes, and the last failures for longer; keys.ts), filtered and paged as `query` says.
   */
  async history(query: HistoryQuery = {}): Promise<HistoryPage> {
    return this.op(() => readHistory(this.store, query, Date.now()));
  }

  /**
   * Adds a call that ended outside a tracked worker's finish to the outcome history (the gateway
   * relaying a call to a service none of whose instances tracks its calls): whoever records must be
   * the only one that does, or the call lands twice. Best effort: skipped while Redis is away.
   */
  async recordOutcome(outcome: RelayedOutcome): Promise<void> {
    if (!this.store.connected) return;
    const { kind, record } = relayedRecord(outcome);
    await this.op(() => this.store.addHistory(kind, outcome.callId, record, this.o.history[kind]));
  }

  /**
   * Everything known of one call: its record while it lives (running, or finished within
   * `resultTtlMs`), with `history` its entry in the outcome history once finished; a call whose
   * record is gone is told from its history entry alone (`state` from it, no result). `unknown` when neither has it.
   */
  async call(callId: string): Promise<CallDetail> {
    return this.op(async () => {
      const [record, attempts, log] = await Promise.all([this.store.record(callId), this.store.attempts(callId), this.store.progressLog(callId)]);
      const progressLog = log.map((json) => decodeProgress(json)).filter((p): p is CallProgress => p !== undefined);
      const status = { ...toCallStatus(callId, record, Date.now()), attempts: parseAttempts(attempts), progressLog };
      const live = status.state === 'running' || status.state === 'queued' || status.state === 'retrying';
      const found = live ? undefined : (await readHistory(this.store, { callId }, Date.now())).items[0];
      if (found === undefined) return status;
      if (status.state === 'unknown') return { ...found, cancelRequested: false, attempts: status.attempts, progressLog, history: found };
      return { ...status, history: found };
    });
  }

  /** A finished call's response (success or error), or undefined while it has none. */
  async result(callId: string): Promise<ResponseMessage | undefined> {
    const status = await this.status(callId);
    return terminal.has(status.state) ? status.response : undefined;
  }

  /**
   * Waits for a call's outcome: how a caller whose reply was lost (reconnect,
   * reply queue gone) still gets its answer. Rejects with ResultTimeoutError
   * after `timeoutMs` or when `signal` aborts.
   */
  async waitForResult(callId: string, opts: { readonly timeoutMs?: number; readonly pollMs?: number; readonly signal?: AbortSignal } = {}): Promise<ResponseMessage> {
    const until = Date.now() + (opts.timeoutMs ?? 30_000);
    for (;;) {
      const response = await this.result(callId).catch((err: unknown) => {
        // Redis away for a moment is a reason to keep waiting, not to give up.
        if (err instanceof InflightUnavailableError) return undefined;
        throw err;
      });
      if (response) return response;
      const left = until - Date.now();
      if (left <= 0 || opts.signal?.aborted) throw new ResultTimeoutError(callId);
      await sleep(Math.min(opts.pollMs ?? 100, left), opts.signal);
    }
  }

  /**
   * Records a call its caller has just sent as queued, so that `status` says
   * `queued` (not `unknown`) until a worker takes it. A call already taken,
   * finished or cancelled keeps its record. The record lives until the
   * call's deadline plus `graceMs`. Resolves true when recorded; false when
   * a record was there, or Redis is not connected (the mark is best effort).
   */
  async markQueued(call: QueuedCall): Promise<boolean> {
    // Once per call: while Redis is away the mark is skipped at once rather than waited for, so an
    // outage under load does not pile up a waiter per call.
    if (!this.store.connected) return false;
    return this.op(() => this.mark(call));
  }

  /**
   * {@link markQueued} for a job id (job-store.ts): the same one `SET NX`, so of two reservations of one
   * id at once exactly one is true; false when the id has a record (queued, running, or finished and
   * kept). Unlike a mark it is no best effort: it waits for Redis as every lookup does, and rejects
   * with InflightUnavailableError when Redis cannot answer.
   */
  async reserveJob(call: QueuedCall): Promise<boolean> {
    return this.op(() => this.mark(call));
  }

  private async mark(call: QueuedCall): Promise<boolean> {
    const meta = encodeMeta({ service: call.service ?? '', method: call.method, deadline: call.deadline, rid: idText(call.id) });
    const ttlMs = callTtlMs(call.deadline, Date.now(), this.o.graceMs);
    // Listed after the record is written (two slots on Redis Cluster): a worker that took it in between
    // left a record the next `list` finds running, and drops the entry.
    const marked = await this.store.markQueued(call.callId, meta, ttlMs);
    if (marked) await this.store.listWaiting('queued', call.callId, call.deadline, ttlMs);
    return marked;
  }

  /**
   * Undoes {@link markQueued} for a call its caller got an answer to: a worker without a tracker answered
   * it, so no claim replaced the mark, which would read `queued` until the deadline. The mark goes only
   * while it is still just that (a claimed, cancelled or finished call keeps its record), and the call
   * leaves the queued list. Best effort, like the mark.
   */
  async unmarkQueued(callId: string): Promise<void> {
    if (!this.store.connected) return;
    await this.op(() => Promise.all([this.store.unmarkQueued(callId), this.store.unlistWaiting('queued', [callId])]));
  }

  /**
   * Cancels a call by id wherever it is. A running call's worker aborts its
   * handler's signal; a call not taken yet is answered CancelledError by
   * whichever worker takes it, without running. Pass the call's `deadline`
   * when known, so the cancel mark lives exactly as long as the call could.
   */
  async cancel(callId: string, opts: { readonly deadline?: number } = {}): Promise<CancelOutcome> {
    return this.op(async () => {
      const reply = await this.store.cancel(callId, cancelMarkTtlMs(opts.deadline, Date.now(), this.o.graceMs, this.o.cancelTtlMs));
      switch (reply.outcome) {
        case 'signalled':
          if (reply.receivers === 0) this.log.info({ callId, worker: reply.worker }, 'cancel recorded; its worker is not listening (it will be answered on takeover)');
          return { outcome: 'signalled', worker: reply.worker };
        case 'marked':
          return { outcome: 'marked' };
        case 'cancelled':
          return { outcome: 'already-cancelled' };
        case 'finished':
          return { outcome: 'finished', state: reply.state };
      }
    });
  }

  /** Live worker instances (heartbeat within three intervals), with how many calls each runs. */
  async workers(filter: { readonly service?: string } = {}): Promise<WorkerInfo[]> {
    return this.op(async () => {
      const { workers } = await this.store.workers();
      return workers.filter((w) => filter.service === undefined || w.service === filter.service).sort((a, b) => a.service.localeCompare(b.service) || a.instanceId.localeCompare(b.instanceId));
    });
  }

  /** Closes the connection. Idempotent. */
  async close(): Promise<void> {
    this.closed = true;
    await this.store.close();
  }

  /** Runs a Redis operation, waiting briefly for a connection still being made; Redis failures become InflightUnavailableError. */
  private async op<T>(work: () => Promise<T>): Promise<T> {
    if (this.closed) throw new InflightClosedError();
    if (!this.store.connected) await this.store.ready(this.o.commandTimeoutMs);
    try {
      return await work();
    } catch (err) {
      throw new InflightUnavailableError(err);
    }
  }
}
