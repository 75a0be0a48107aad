// The in-flight store in Redis (the ports of store-port.ts over ioredis): the scripts, the reads,
// and the cancel channel. The client is opened in redis-connection.ts, the hot scripts batched in
// redis-batches.ts, the Lua in scripts.ts.
import { Cluster } from 'ioredis';
import type { Logger } from '@warren/logger';
import { parseClaimReply, parseLiveMarks, parseRecord, queuedRecord, parseWorkersReply, stateLetter, type ClaimReply, type HeartbeatEntry, type WorkerInfo } from './record-codec';
import type { HistoryBounds, HistoryKind, Keys } from './keys';
import type { RedisConfig } from './options';
import { ScriptBatches } from './redis-batches';
import { stallTolerantTimeouts } from '@warren/redis';
import { closeRedis, defineScripts, openRedis, runScript, type RedisClient } from './redis-connection';
import type { ScriptName } from './scripts';
import type { CancelReply, ClaimArgs, FinishArgs, HistoryEntry, TrackerStore, ViewStore, WaitingList } from './store-port';

/** The value of `name` in a stream entry's flat field list; '' when absent. */
function field(f: readonly string[], name: string): string {
  for (let i = 0; i + 1 < f.length; i += 2) if (f[i] === name) return f[i + 1] as string;
  return '';
}

/**
 * The in-flight store in Redis: the scripts, the reads, and the cancel
 * channel. The only module that talks to ioredis directly.
 */
export class RedisStore implements TrackerStore, ViewStore {
  readonly client: RedisClient;
  private readonly owned: boolean;
  private subscriber: RedisClient | undefined;
  /** The subscriber listens on both cancel channels (see {@link listening}). */
  private subscribed = false;
  private closing: Promise<void> | undefined;
  /** The hot scripts' batches (claims per tick, finishes per turn). */
  private readonly batches: ScriptBatches;

  /**
   * `autoPipelining: false` suits a worker's tracker: its hot-path scripts are batched per tick
   * already (Batcher), and ioredis' own pipelining on top only adds a deferred write and its
   * bookkeeping to every command (measured: 56 vs 42 µs of worker CPU per tracked call).
   */
  constructor(config: RedisConfig, private readonly commandTimeoutMs: number, private readonly k: Keys, private readonly log: Logger, options: { readonly autoPipelining: boolean; readonly history?: HistoryBounds | false } = { autoPipelining: true }) {
    const { client, owned } = openRedis(config, commandTimeoutMs, options.autoPipelining);
    this.client = client;
    this.owned = owned;
    // Without a listener ioredis prints every connection error; the tracker reports them once per transition instead.
    client.on('error', (err: unknown) => this.log.debug({ err }, 'redis connection error'));
    defineScripts(client);
    this.batches = new ScriptBatches((name, ...args) => this.run(name, ...args), client instanceof Cluster, k, options.history);
  }

  get keys(): Keys {
    return this.k;
  }

  get connected(): boolean {
    return this.client.status === 'ready';
  }

  claim(callId: string, args: ClaimArgs): Promise<ClaimReply> {
    return this.batches.claim(this.k.call(callId), args).then((raw) => this.claimed(callId, parseClaimReply(raw)));
  }

  /**
   * A call its caller marked queued leaves the queued list once a worker took it (a command of its own:
   * the list is in another slot on Redis Cluster; not awaited: a failure only leaves an entry the view
   * drops when it next reads it).
   */
  private claimed(callId: string, reply: ClaimReply): ClaimReply {
    if (reply.kind === 'run' && reply.fromQueue === true) this.unlistWaiting('queued', [callId]).catch((err: unknown) => this.log.debug({ err, callId }, 'taken call not dropped from the queued list'));
    return reply;
  }

  claimsWritten(): Promise<void> | undefined {
    return this.batches.claimsWritten();
  }

  finish(callId: string, a: FinishArgs): Promise<number> {
    const key = this.k.call(callId);
    const state = stateLetter(a.state);
    if (a.unclaimed) return this.run('inflightRecord', key, state, a.result, a.ttlMs, a.code, a.unclaimed.worker, a.unclaimed.meta).then(Number);
    return this.batches.finish({ key, state, result: a.result, ttlMs: a.ttlMs, code: a.code });
  }

  async release(callId: string, token: string): Promise<number> {
    return Number(await this.run('inflightRelease', this.k.call(callId), token));
  }

  async renew(callId: string, token: string, leaseMs: number): Promise<number> {
    return Number(await this.run('inflightRenew', this.k.call(callId), token, leaseMs));
  }

  async retrying(callId: string, token: string, nextTryAt: number): Promise<number> {
    return Number(await this.run('inflightRetrying', this.k.call(callId), this.k.progress(callId), token, nextTryAt));
  }

  async listWaiting(list: WaitingList, callId: string, deadline: number, ttlMs: number): Promise<void> {
    await this.run('inflightWaitingAdd', this.k[list], callId, Math.floor(deadline), ttlMs);
  }

  /** The calls of one waiting list whose deadline has not passed, at most `max`. */
  async waitingCalls(list: WaitingList, max: number): Promise<string[]> {
    const ids = await this.run('inflightWaitingList', this.k[list], max);
    return Array.isArray(ids) ? ids.filter((id): id is string => typeof id === 'string') : [];
  }

  /** Drops calls from a waiting list (a worker took them, or the view found them finished or forgotten). */
  async unlistWaiting(list: WaitingList, callIds: readonly string[]): Promise<void> {
    if (callIds.length > 0) await this.client.zrem(this.k[list], ...callIds);
  }

  async listDelayed(callId: string, dueAt: number, entry: string, ttlMs: number, max: number): Promise<void> {
    await this.run('inflightDelayedAdd', this.k.delayed, this.k.delayedCalls, callId, Math.floor(dueAt), entry, ttlMs, max);
  }

  async delayedEntries(max: number): Promise<string[]> {
    const entries = await this.run('inflightDelayedList', this.k.delayed, this.k.delayedCalls, max);
    return Array.isArray(entries) ? entries.filter((e): e is string => typeof e === 'string') : [];
  }

  async delayedEntry(callId: string): Promise<string | undefined> {
    return (await this.client.hget(this.k.delayedCalls, callId)) ?? undefined;
  }

  async unlistDelayed(callIds: readonly string[]): Promise<void> {
    if (callIds.length > 0) await this.client.multi().zrem(this.k.delayed, ...callIds).hdel(this.k.delayedCalls, ...callIds).exec();
  }

  async progress(callId: string, token: string, json: string, logTtlMs: number): Promise<number> {
    return Number(await this.run('inflightProgress', this.k.call(callId), this.k.progress(callId), this.k.progressLog(callId), token, json, logTtlMs));
  }

  async cancel(callId: string, markTtlMs: number): Promise<CancelReply> {
    // Indexed before it is published: a worker that subscribes at any moment either hears the mark or
    // reads it back from the index (subscribeCancels), never neither.
    await this.run('inflightMarkIndex', this.k.cancelMarkIndex, callId, markTtlMs);
    const raw = await this.run('inflightCancel', this.k.call(callId), markTtlMs, this.k.cancelChannel(''), callId, this.k.cancelMarks);
    const [outcome, a, b] = Array.isArray(raw) ? (raw as unknown[]) : [];
    const worker = typeof a === 'string' && a !== '' ? a : undefined;
    switch (outcome) {
      case 'marked':
        // A queued call's mark lives as long as its record, which can outlive `markTtlMs`.
        if (Number(b) > markTtlMs) await this.run('inflightMarkIndex', this.k.cancelMarkIndex, callId, Number(b));
        return { outcome, worker };
      case 'signalled':
        return { outcome, worker: worker ?? '', receivers: Number(b) || 0 };
      case 'cancelled':
        return { outcome, worker };
      default:
        return { outcome: 'finished', state: typeof a === 'string' ? a : 'unknown' };
    }
  }

  async heartbeat(service: string, instanceId: string, entry: HeartbeatEntry, entryTtlMs: number, keyTtlMs: number): Promise<void> {
    await this.run('inflightHeartbeat', this.k.workers, this.k.workersSeen, this.k.workerField(service, instanceId), JSON.stringify(entry), entryTtlMs, keyTtlMs);
  }

  async goodbye(service: string, instanceId: string): Promise<void> {
    await this.run('inflightGoodbye', this.k.workers, this.k.workersSeen, this.k.workerField(service, instanceId));
  }

  effectStart(callId: string, name: string, mark: string, ttlMs: number): Promise<unknown> {
    return this.run('inflightEffectStart', this.k.effects(callId), name, mark, ttlMs);
  }

  async effectComplete(callId: string, name: string, json: string, ttlMs: number): Promise<number> {
    return Number(await this.run('inflightEffectComplete', this.k.effects(callId), name, `D${json}`, ttlMs));
  }

  async effectForget(callId: string, name: string, mark: string): Promise<number> {
    return Number(await this.run('inflightEffectForget', this.k.effects(callId), name, mark));
  }

  async workers(): Promise<{ now: number; workers: WorkerInfo[] }> {
    return parseWorkersReply(await this.run('inflightWorkers', this.k.workers, this.k.workersSeen));
  }

  /**
   * Records a call as queued unless it has a record already: a worker that
   * claimed it first, or a cancel, wins (SET NX). True when recorded.
   */
  async markQueued(callId: string, meta: string, ttlMs: number): Promise<boolean> {
    return (await this.client.set(this.k.call(callId), queuedRecord(meta, Date.now()), 'PX', ttlMs, 'NX')) === 'OK';
  }

  async unmarkQueued(callId: string): Promise<boolean> {
    return Number(await this.run('inflightUnmarkQueued', this.k.call(callId))) === 1;
  }

  /**
   * One call's record, as named fields ({@link parseRecord}); empty when there is none. Its latest
   * progress comes along as the field `progress` (JSON): both keys share a slot, so one MGET.
   */
  async record(callId: string): Promise<Record<string, string>> {
    const [record, progress] = await this.client.mget(this.k.call(callId), this.k.progress(callId));
    const fields = parseRecord(record);
    if (typeof progress === 'string' && progress !== '' && fields['state'] !== undefined) fields['progress'] = progress;
    return fields;
  }

  async addHistory(kind: HistoryKind, callId: string, record: string, bound: { readonly entries: number; readonly ageMs: number }): Promise<void> {
    await this.run('inflightHistoryAdd', this.k.history(kind), callId, record, bound.entries, bound.ageMs);
  }

  attempts(callId: string): Promise<string[]> {
    return this.client.lrange(this.k.attempts(callId), 0, -1);
  }

  progressLog(callId: string): Promise<string[]> {
    return this.client.lrange(this.k.progressLog(callId), 0, -1);
  }

  /**
   * History entries of one stream, newest first, with ids below `before` (exclusive; all when
   * undefined) and at or after `since` (ms), at most `count`: `[id, callId, record]`.
   */
  async historyRange(kind: HistoryKind, before: string | undefined, since: number, count: number): Promise<HistoryEntry[]> {
    const raw = await this.client.xrevrange(this.k.history(kind), before === undefined ? '+' : `(${before}`, String(since), 'COUNT', count);
    return raw.map(([id, f]) => [id, field(f, 'c'), field(f, 'r')]);
  }

  /** Sets each key to its text with one TTL: plain SETs sent together (auto-pipelined), each key in its own slot. */
  async setAll(entries: readonly (readonly [key: string, text: string])[], ttlMs: number): Promise<void> {
    await Promise.all(entries.map(([key, text]) => this.client.set(key, text, 'PX', ttlMs)));
  }

  /** One key's text, or undefined when there is none. */
  async text(key: string): Promise<string | undefined> {
    return (await this.client.get(key)) ?? undefined;
  }

  subscribeCancels(instanceId: string, onCancel: (callId: string, markTtlMs?: number) => void, maxMarks: number): void {
    if (this.subscriber) throw new Error('subscribeCancels: already subscribed');
    const channel = this.k.cancelChannel(instanceId);
    const marks = this.k.cancelMarks;
    // ioredis' own re-subscribe after a reconnect leaves its promise unhandled: a connection lost again
    // at that moment (Redis flapping) rejects it and takes the process down. So single nodes subscribe
    // on every 'ready' here, where a failure is caught; a cluster's subscriber catches its own.
    const sub: RedisClient = this.client instanceof Cluster ? this.client.duplicate() : this.client.duplicate({ autoResubscribe: false });
    // A copy of a client made here has its settings, but not its command timeouts (redis-connection.ts).
    if (this.owned) stallTolerantTimeouts(sub, this.commandTimeoutMs);
    this.subscriber = sub;
    sub.on('error', (err: unknown) => this.log.debug({ err }, 'redis subscriber connection error'));
    sub.on('message', (from: string, message: string) => {
      if (from === channel) onCancel(message);
      else if (from === marks) {
        const space = message.indexOf(' ');
        const ttlMs = Number(message.slice(0, space));
        if (space > 0 && Number.isSafeInteger(ttlMs) && ttlMs > 0) onCancel(message.slice(space + 1), ttlMs);
      }
    });
    // Marks published while it was away are missed: first deliveries wait for their claims until it is
    // subscribed again *and* has read back the marks still alive (made in the meantime, or before it ever
    // subscribed). Read after the subscription is live, so a mark is heard, or read, or both.
    let session = 0;
    let readBackDue = false;
    const subscribe = async (): Promise<void> => {
      const current = session;
      readBackDue = false;
      try {
        await sub.subscribe(channel, marks);
        const live = await this.run('inflightLiveMarks', this.k.cancelMarkIndex, maxMarks);
        for (const [callId, msLeft] of parseLiveMarks(live)) if (msLeft > 0) onCancel(callId, msLeft);
        this.subscribed = current === session && sub.status === 'ready';
      } catch (err) {
        // Tried again on the next 'ready' of either connection.
        readBackDue = current === session;
        this.log.debug({ err }, 'cancel channel subscribe or mark read-back failed');
      }
    };
    sub.on('close', () => {
      session += 1;
      this.subscribed = false;
    });
    sub.on('ready', () => void subscribe());
    this.client.on('ready', () => {
      if (readBackDue && sub.status === 'ready') void subscribe();
    });
    if (sub.status === 'ready') void subscribe();
  }

  get listening(): boolean {
    return this.subscribed;
  }

  onConnection(listener: (up: boolean) => void): void {
    this.client.on('ready', () => listener(true));
    this.client.on('close', () => listener(false));
  }

  ready(timeoutMs: number): Promise<boolean> {
    if (this.client.status === 'ready') return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = (ok: boolean): void => {
        clearTimeout(timer);
        this.client.off('ready', onReady);
        resolve(ok);
      };
      const onReady = (): void => done(true);
      const timer = setTimeout(() => done(false), timeoutMs);
      this.client.on('ready', onReady);
    });
  }

  /** Closes the subscriber, and the client if it is ours. Idempotent. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      if (this.subscriber) await closeRedis(this.subscriber);
      if (this.owned) await closeRedis(this.client);
    })();
    return this.closing;
  }

  private run(name: ScriptName, ...args: (string | number)[]): Promise<unknown> {
    return runScript(this.client, name, ...args);
  }
}
