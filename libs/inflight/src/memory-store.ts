import {
  parseRecord, parseWorkersReply, queuedRecord, recordSeparator, stateLetter, type ClaimReply, type HeartbeatEntry, type WorkerInfo,
} from './record-codec';
import { historyBounds, type HistoryBounds } from './keys';
import { maxErrorBytes } from './history-script';
import { MemoryHistory } from './memory-history';
import { MemoryEffects } from './memory-effects';
import { MemoryProgress } from './memory-progress';
import { at, claimTransition, fields, join, put, stateName } from './memory-record';
import type { CancelReply, ClaimArgs, FinishArgs, WaitingList } from './store-port';

/**
 * The in-flight store in memory, for embedded mode (one process: the broker and every service in
 * it share one instance, the way a cluster shares one Redis). It holds what Redis holds, in the
 * same record format (record-codec.ts reads both), and makes each transition the Lua script of the
 * same name in scripts.ts makes (record-scripts.ts and its neighbours); every transition is synchronous, so it is atomic like a script.
 * The tracker's and the view's decisions stay in claim-decisions.ts and view.ts: this is only the
 * store; memory-handle.ts puts the store ports over it.
 *
 * Memory only: nothing survives the process, which is what embedded mode promises.
 * Expiry is lazy (a read past its TTL finds nothing), with a sweep at most once a second on writes,
 * so memory stays bounded by what is live.
 *
 * @example
 * const memory = new MemoryInflightStore();
 * const tracker = createMemoryTracker(memory, { keyPrefix: 'warren' });
 * const view = memoryInflightView(memory);
 */
export class MemoryInflightStore {
  /** Call records, by call id; each entry keeps its own expiry (ms since the epoch). */
  private readonly records = new Map<string, Entry<string>>();
  /** Each call's latest progress and progress log. */
  private readonly progress = new MemoryProgress();
  /** A call's earlier attempts (the attempts list), by call id. */
  private readonly attempts = new Map<string, Entry<string[]>>();
  /** @internal Each call's `ctx.once` effects. */
  readonly effects = new MemoryEffects();
  /** `service/instanceId` → heartbeat entry (JSON) and when it stops counting as live. */
  private readonly workers = new Map<string, Entry<string>>();
  /** Calls no worker runs now, with their deadlines, per waiting list (the `retrying` and `queued` sorted sets). */
  private readonly waiting: Readonly<Record<WaitingList, Map<string, number>>> = { retrying: new Map(), queued: new Map() };
  /** Delayed calls not yet due, with their entries (the `delayed` sorted set and its hash). */
  private readonly delayed = new Map<string, { readonly dueAt: number; readonly entry: string }>();
  private readonly cancelListeners = new Map<string, Set<(callId: string, markTtlMs?: number) => void>>();
  /** Every subscribed worker, told of each cancel mark (the `cancel-marks` channel). */
  private readonly markListeners = new Set<(callId: string, markTtlMs?: number) => void>();
  /** Every live cancel mark, with when it expires (the mark index), told to a worker that subscribes later. */
  private readonly marks = new Map<string, Entry<true>>();
  private lastSweep = 0;
  /** @internal The outcome history (the finish script's streams). */
  readonly history: MemoryHistory;

  /** `history`: how much outcome history is kept, as TrackerOptions.history. @default historyBounds (keys.ts) */
  constructor(options: { readonly history?: HistoryBounds | false } = {}) {
    this.history = new MemoryHistory(options.history ?? historyBounds);
  }

  /** @internal */ claim(callId: string, a: ClaimArgs): ClaimReply {
    const now = this.write();
    const { reply, write, past } = claimTransition(this.get(this.records, callId), a, now);
    if (past !== undefined) this.set(this.attempts, callId, [...(this.get(this.attempts, callId) ?? []), past], a.finishedTtlMs, now);
    if (reply.kind === 'run' && reply.fromQueue === true) this.waiting.queued.delete(callId);
    if (write === undefined) return reply;
    // The claim ended the call itself (dead: WorkerLost; a takeover too late: expired): a failure of the history, as in the claim script.
    if (write.value[0] === 'F' || write.value[0] === 'E') this.history.add(callId, write.value, write.value[0], '', 0, now);
    if (write.ttlMs === 'keep') this.keep(callId, write.value);
    else this.set(this.records, callId, write.value, write.ttlMs, now);
    return reply;
  }

  /** @internal waitingAdd: lists a call no worker runs now until its deadline, dropping the entries past theirs. */
  listWaiting(list: WaitingList, callId: string, deadline: number): void {
    const now = this.write();
    const waiting = this.waiting[list];
    waiting.set(callId, Math.floor(deadline));
    for (const [id, until] of waiting) if (until < now) waiting.delete(id);
  }

  /** @internal waitingList: the listed calls whose deadline has not passed, earliest deadline first, at most `max`. */
  waitingCalls(list: WaitingList, max: number): string[] {
    const now = Date.now();
    const waiting = this.waiting[list];
    for (const [id, until] of waiting) if (until < now) waiting.delete(id);
    return [...waiting].sort((x, y) => x[1] - y[1]).slice(0, max).map(([id]) => id);
  }

  /** @internal */ unlistWaiting(list: WaitingList, callIds: readonly string[]): void {
    for (const id of callIds) this.waiting[list].delete(id);
  }

  /** @internal delayedAdd: lists a delayed call until due, dropping those due already and, past `max`, those due last. */
  listDelayed(callId: string, dueAt: number, entry: string, max: number): void {
    const now = this.write();
    this.delayed.set(callId, { dueAt: Math.floor(dueAt), entry });
    for (const [id, d] of this.delayed) if (d.dueAt < now) this.delayed.delete(id);
    const over = [...this.delayed].sort((x, y) => y[1].dueAt - x[1].dueAt).slice(0, Math.max(0, this.delayed.size - max));
    for (const [id] of over) this.delayed.delete(id);
  }

  /** @internal delayedList: entries not yet due, soonest first, at most `max`. */
  delayedEntries(max: number): string[] {
    const now = Date.now();
    return [...this.delayed.values()].filter((d) => d.dueAt >= now).sort((x, y) => x.dueAt - y.dueAt).slice(0, max).map((d) => d.entry);
  }

  /** @internal */ delayedEntry(callId: string): string | undefined {
    return this.delayed.get(callId)?.entry;
  }

  /** @internal */ unlistDelayed(callIds: readonly string[]): void {
    for (const id of callIds) this.delayed.delete(id);
  }

  /** Rewrites a record keeping its expiry (the scripts' KEEPTTL). */
  private keep(callId: string, value: string): void {
    const entry = this.records.get(callId);
    if (entry) entry.value = value;
  }

  /** @internal The finish and record scripts: the first outcome wins. */
  finish(callId: string, a: FinishArgs): number {
    const now = this.write();
    const v = this.get(this.records, callId);
    const live = v !== undefined && (v[0] === 'R' || v[0] === 'Q' || v[0] === 'W');
    if (v !== undefined && !live) return 0;
    const f = v === undefined ? fields(a.unclaimed ? { worker: a.unclaimed.worker, meta: a.unclaimed.meta } : {}) : v.split(recordSeparator);
    put(f, 'state', stateLetter(a.state));
    put(f, 'code', a.code);
    put(f, 'finishedAt', String(now));
    put(f, 'result', '');
    const head = join(f);
    this.set(this.records, callId, head + a.result, a.ttlMs, now);
    this.history.add(callId, head, stateLetter(a.state), a.result, maxErrorBytes, now);
    return 1;
  }

  /** @internal */ release(callId: string, token: string): number {
    return this.update(callId, token, (f) => {
      put(f, 'state', 'Q');
      put(f, 'lease', '');
      put(f, 'token', '');
      return 1;
    }) ?? 0;
  }

  /** @internal */ retrying(callId: string, token: string, nextTryAt: number): number {
    return this.update(callId, token, (f) => {
      put(f, 'state', 'W');
      put(f, 'lease', String(nextTryAt));
      put(f, 'token', '');
      this.progress.dropLatest(callId);
      return 1;
    }) ?? 0;
  }

  /** @internal */ renew(callId: string, token: string, leaseMs: number): number {
    const now = Date.now();
    const outcome = this.update(callId, token, (f) => {
      put(f, 'lease', String(now + leaseMs));
      return at(f, 'cancel') === '1' ? 1 : 0;
    });
    return outcome === undefined ? -1 : outcome;
  }

  /** @internal */ setProgress(callId: string, token: string, json: string, logTtlMs: number): number {
    const record = this.records.get(callId);
    const written = this.update(callId, token, () => 1);
    if (written !== 1 || record === undefined) return 0;
    const now = this.write();
    this.progress.write(callId, json, record.expiresAt - now, logTtlMs, now);
    return 1;
  }

  /** @internal */ cancel(callId: string, markTtlMs: number): CancelReply {
    const now = this.write();
    const entry = this.records.get(callId);
    const v = this.get(this.records, callId);
    if (v === undefined || entry === undefined) {
      this.set(this.records, callId, join(fields({ state: 'C', cancel: '1', finishedAt: String(now) })), markTtlMs, now);
      this.publishMark(callId, markTtlMs);
      return { outcome: 'marked', worker: undefined };
    }
    const f = v.split(recordSeparator);
    const state = at(f, 'state');
    const worker = at(f, 'worker') === '' ? undefined : at(f, 'worker');
    if (state === 'Q' || state === 'W' || state === 'R') {
      put(f, 'cancel', '1');
      if (state !== 'R') {
        put(f, 'state', 'C');
        put(f, 'finishedAt', String(now));
      }
      entry.value = join(f);
      if (state !== 'R') {
        this.publishMark(callId, Math.max(1, entry.expiresAt - now));
        return { outcome: 'marked', worker };
      }
      const listeners = [...(this.cancelListeners.get(at(f, 'worker')) ?? [])];
      // Delivered after the reply, as a pub/sub message arrives after the script's answer.
      if (listeners.length > 0) queueMicrotask(() => { for (const l of listeners) l(callId); });
      return { outcome: 'signalled', worker: worker ?? '', receivers: listeners.length };
    }
    if (state === 'C') return { outcome: 'cancelled', worker };
    return { outcome: 'finished', state: stateName[state] ?? state };
  }

  /** @internal */ markQueued(callId: string, meta: string, ttlMs: number): boolean {
    const now = this.write();
    if (this.get(this.records, callId) !== undefined) return false;
    this.set(this.records, callId, queuedRecord(meta, now), ttlMs, now);
    return true;
  }

  /** @internal The unmarkQueued script: only the caller's own mark goes (queued, attempt 0, no worker, no cancel). */
  unmarkQueued(callId: string): boolean {
    const f = parseRecord(this.get(this.records, callId));
    if (f['state'] !== 'queued' || f['attempt'] !== '0' || f['worker'] !== undefined || f['cancel'] !== undefined) return false;
    this.records.delete(callId);
    return true;
  }

  /** @internal */ record(callId: string): Record<string, string> {
    const out = parseRecord(this.get(this.records, callId));
    const progress = this.progress.latestOf(callId, Date.now());
    if (progress !== undefined && progress !== '' && out['state'] !== undefined) out['progress'] = progress;
    return out;
  }

  /** @internal The progress log of a call (JSON entries, oldest first). */
  progressLog(callId: string): string[] {
    return this.progress.logOf(callId, Date.now());
  }

  /** @internal The attempts list of a call (JSON entries, oldest first). */
  pastAttempts(callId: string): string[] {
    return [...(this.get(this.attempts, callId) ?? [])];
  }

  /** @internal */ heartbeat(service: string, instanceId: string, entry: HeartbeatEntry, entryTtlMs: number): void {
    const now = this.write();
    this.set(this.workers, `${service}/${instanceId}`, JSON.stringify(entry), entryTtlMs, now);
  }

  /** @internal */ goodbye(service: string, instanceId: string): void {
    this.workers.delete(`${service}/${instanceId}`);
  }

  /** @internal The same reply the workers script gives, read by the same parser. */
  liveWorkers(): { now: number; workers: WorkerInfo[] } {
    const now = Date.now();
    const raw: unknown[] = [now];
    for (const [field, entry] of this.workers) if (entry.expiresAt > now) raw.push(field, entry.value, entry.expiresAt);
    return parseWorkersReply(raw);
  }

  /** @internal */ subscribe(instanceId: string, listener: (callId: string, markTtlMs?: number) => void, maxMarks: number): () => void {
    let set = this.cancelListeners.get(instanceId);
    if (!set) this.cancelListeners.set(instanceId, (set = new Set()));
    set.add(listener);
    this.markListeners.add(listener);
    // The marks made before it subscribed, longest-lived first, as the Redis store reads them back.
    const now = this.write();
    const live = [...this.marks].filter(([, e]) => e.expiresAt > now).sort((a, b) => b[1].expiresAt - a[1].expiresAt);
    for (const [callId, e] of live.slice(0, maxMarks)) listener(callId, e.expiresAt - now);
    return () => {
      set.delete(listener);
      this.markListeners.delete(listener);
      if (set.size === 0) this.cancelListeners.delete(instanceId);
    };
  }

  /** Tells every worker of a cancel mark, after the script's answer (as a pub/sub message arrives). */
  private publishMark(callId: string, ttlMs: number): void {
    this.set(this.marks, callId, true, ttlMs, Date.now());
    const listeners = [...this.markListeners];
    if (listeners.length > 0) queueMicrotask(() => { for (const l of listeners) l(callId, ttlMs); });
  }

  /** Changes a running call's record if `token` holds its claim (KEEPTTL); undefined when it does not. */
  private update<T>(callId: string, token: string, change: (f: string[]) => T): T | undefined {
    const entry = this.records.get(callId);
    const v = this.get(this.records, callId);
    if (v === undefined || entry === undefined) return undefined;
    const f = v.split(recordSeparator);
    if (at(f, 'state') !== 'R' || at(f, 'token') !== token) return undefined;
    const out = change(f);
    entry.value = join(f);
    return out;
  }

  private get<T>(map: Map<string, Entry<T>>, key: string): T | undefined {
    const entry = map.get(key);
    if (entry === undefined) return undefined;
    if (entry.expiresAt > Date.now()) return entry.value;
    map.delete(key);
    return undefined;
  }

  private set<T>(map: Map<string, Entry<T>>, key: string, value: T, ttlMs: number, now: number): void {
    map.set(key, { value, expiresAt: now + Math.max(1, Number(ttlMs)) });
  }

  /** The time of a write, sweeping what expired at most once a second. */
  private write(): number {
    const now = Date.now();
    if (now - this.lastSweep >= 1000) {
      this.lastSweep = now;
      this.progress.sweep(now);
      this.effects.sweep(now);
      for (const map of [this.records, this.attempts, this.workers, this.marks] as Map<string, Entry<unknown>>[]) {
        for (const [key, entry] of map) if (entry.expiresAt <= now) map.delete(key);
      }
    }
    return now;
  }
}

interface Entry<T> {
  value: T;
  expiresAt: number;
}
