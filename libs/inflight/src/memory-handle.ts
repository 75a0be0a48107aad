// One tracker's or view's connection to the in-memory store: the store ports (store-port.ts) over a
// MemoryInflightStore, each operation applied synchronously and answered as a settled promise.
import type { ClaimReply, HeartbeatEntry, WorkerInfo } from './record-codec';
import type { HistoryKind } from './keys';
import type { MemoryInflightStore } from './memory-store';
import type { CancelReply, ClaimArgs, FinishArgs, HistoryEntry, TrackerStore, ViewStore, WaitingList } from './store-port';

/** A handle for one tracker or view: closing it drops its subscription, not the data. */
export function connectMemory(memory: MemoryInflightStore): MemoryInflightHandle {
  return new MemoryInflightHandle(memory);
}

/**
 * One tracker's or view's connection to a {@link MemoryInflightStore}: the {@link TrackerStore}
 * and {@link ViewStore} ports over it. Never fails and never disconnects, so a tracker over it is
 * always `tracking`.
 */
export class MemoryInflightHandle implements TrackerStore, ViewStore {
  private unsubscribe: (() => void) | undefined;
  private closed = false;

  constructor(private readonly memory: MemoryInflightStore) {}

  get connected(): boolean {
    return !this.closed;
  }

  claim(callId: string, args: ClaimArgs): Promise<ClaimReply> {
    return Promise.resolve(this.memory.claim(callId, args));
  }

  /** A claim is applied when made. */
  claimsWritten(): undefined {
    return undefined;
  }

  finish(callId: string, args: FinishArgs): Promise<number> {
    return Promise.resolve(this.memory.finish(callId, args));
  }

  release(callId: string, token: string): Promise<number> {
    return Promise.resolve(this.memory.release(callId, token));
  }

  renew(callId: string, token: string, leaseMs: number): Promise<number> {
    return Promise.resolve(this.memory.renew(callId, token, leaseMs));
  }

  retrying(callId: string, token: string, nextTryAt: number): Promise<number> {
    return Promise.resolve(this.memory.retrying(callId, token, nextTryAt));
  }

  /** `_ttlMs`: the index lives as long as the store; each entry leaves at its deadline. */
  listWaiting(list: WaitingList, callId: string, deadline: number, _ttlMs: number): Promise<void> {
    this.memory.listWaiting(list, callId, deadline);
    return Promise.resolve();
  }

  waitingCalls(list: WaitingList, max: number): Promise<string[]> {
    return Promise.resolve(this.memory.waitingCalls(list, max));
  }

  unlistWaiting(list: WaitingList, callIds: readonly string[]): Promise<void> {
    this.memory.unlistWaiting(list, callIds);
    return Promise.resolve();
  }

  /** `_ttlMs`: the list lives as long as the store; each entry leaves once due. */
  listDelayed(callId: string, dueAt: number, entry: string, _ttlMs: number, max: number): Promise<void> {
    this.memory.listDelayed(callId, dueAt, entry, max);
    return Promise.resolve();
  }

  delayedEntries(max: number): Promise<string[]> {
    return Promise.resolve(this.memory.delayedEntries(max));
  }

  delayedEntry(callId: string): Promise<string | undefined> {
    return Promise.resolve(this.memory.delayedEntry(callId));
  }

  unlistDelayed(callIds: readonly string[]): Promise<void> {
    this.memory.unlistDelayed(callIds);
    return Promise.resolve();
  }

  progress(callId: string, token: string, json: string, logTtlMs: number): Promise<number> {
    return Promise.resolve(this.memory.setProgress(callId, token, json, logTtlMs));
  }

  /** `_keyTtlMs`: each entry expires on its own here, so the whole set needs no TTL of its own. */
  heartbeat(service: string, instanceId: string, entry: HeartbeatEntry, entryTtlMs: number, _keyTtlMs: number): Promise<void> {
    this.memory.heartbeat(service, instanceId, entry, entryTtlMs);
    return Promise.resolve();
  }

  goodbye(service: string, instanceId: string): Promise<void> {
    this.memory.goodbye(service, instanceId);
    return Promise.resolve();
  }

  effectStart(callId: string, name: string, mark: string, ttlMs: number): Promise<unknown> {
    return Promise.resolve(this.memory.effects.start(callId, name, mark, ttlMs));
  }

  effectComplete(callId: string, name: string, json: string, ttlMs: number): Promise<number> {
    return Promise.resolve(this.memory.effects.complete(callId, name, json, ttlMs));
  }

  effectForget(callId: string, name: string, mark: string): Promise<number> {
    return Promise.resolve(this.memory.effects.forget(callId, name, mark));
  }

  subscribeCancels(instanceId: string, onCancel: (callId: string, markTtlMs?: number) => void, maxMarks: number): void {
    if (this.unsubscribe) throw new Error('subscribeCancels: already subscribed');
    this.unsubscribe = this.memory.subscribe(instanceId, onCancel, maxMarks);
  }

  get listening(): boolean {
    return this.unsubscribe !== undefined && !this.closed;
  }

  /** Memory is never lost: nothing to report. */
  onConnection(): void {}

  ready(): Promise<boolean> {
    return Promise.resolve(!this.closed);
  }

  workers(): Promise<{ now: number; workers: WorkerInfo[] }> {
    return Promise.resolve(this.memory.liveWorkers());
  }

  record(callId: string): Promise<Record<string, string>> {
    return Promise.resolve(this.memory.record(callId));
  }

  /** Bounded by the store's own history bounds (`bound` is what a Redis writer trims to). */
  addHistory(kind: HistoryKind, callId: string, record: string): Promise<void> {
    this.memory.history.addEntry(kind, callId, record, Date.now());
    return Promise.resolve();
  }

  attempts(callId: string): Promise<string[]> {
    return Promise.resolve(this.memory.pastAttempts(callId));
  }

  progressLog(callId: string): Promise<string[]> {
    return Promise.resolve(this.memory.progressLog(callId));
  }

  markQueued(callId: string, meta: string, ttlMs: number): Promise<boolean> {
    return Promise.resolve(this.memory.markQueued(callId, meta, ttlMs));
  }

  unmarkQueued(callId: string): Promise<boolean> {
    return Promise.resolve(this.memory.unmarkQueued(callId));
  }

  cancel(callId: string, markTtlMs: number): Promise<CancelReply> {
    return Promise.resolve(this.memory.cancel(callId, markTtlMs));
  }

  historyRange(kind: HistoryKind, before: string | undefined, since: number, count: number): Promise<HistoryEntry[]> {
    return Promise.resolve(this.memory.history.range(kind, before, since, count));
  }

  /** Drops this handle's cancel subscription; the data stays for the other handles. Idempotent. */
  close(): Promise<void> {
    this.closed = true;
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    return Promise.resolve();
  }
}
