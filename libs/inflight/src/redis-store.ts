import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import type { Logger } from '@warren/logger';
import {
  encodeOwner, parseClaimReply, parseLiveMarks, parseRecord, queuedRecord, parseWorkersReply, stateLetter, type ClaimReply, type HeartbeatEntry, type WorkerInfo,
} from './record-codec';
import { historyArgs } from './history-script';
import type { HistoryBounds, HistoryKind, Keys } from './keys';
import type { RedisConfig } from './options';
import { Batcher } from './batch';
import { scripts, type ScriptName } from './scripts';
import { sleep } from './sleep';
import { claimMode, type ClaimMode } from './takeover';
import type { CancelReply, ClaimArgs, FinishArgs, HistoryEntry, TrackerStore, ViewStore, WaitingList } from './store-port';
export type { CancelReply, ClaimArgs, FinishArgs, HistoryEntry, TrackerStore, ViewStore } from './store-port';

export type RedisClient = Redis | Cluster;

/** What the claims of one batch share. */
type ClaimSettings = Pick<ClaimArgs, 'worker' | 'leaseMs' | 'maxAttempts' | 'workerLostCode'>;

const sameSettings = (a: ClaimSettings, b: ClaimSettings): boolean => a.worker === b.worker && a.leaseMs === b.leaseMs && a.maxAttempts === b.maxAttempts && a.workerLostCode === b.workerLostCode;

interface ClaimItem {
  readonly key: string;
  readonly attempt: number;
  /** Worker, token, attempt, cancel and meta, packed ({@link encodeOwner}). */
  readonly owner: string;
  readonly runningTtlMs: number;
  readonly finishedTtlMs: number;
  /** The claim script's mode ({@link claimMode}). */
  readonly mode: ClaimMode;
  /** '' or "deadline wait1 wait2 ..." (the claim script's form of {@link ClaimArgs.retry}). */
  readonly retry: string;
}

interface FinishItem {
  readonly key: string;
  /** One letter ({@link stateLetter}). */
  readonly state: string;
  readonly result: string;
  readonly ttlMs: number;
  readonly code: string;
}

/** The value of `name` in a stream entry's flat field list; '' when absent. */
function field(f: readonly string[], name: string): string {
  for (let i = 0; i + 1 < f.length; i += 2) if (f[i] === name) return f[i + 1] as string;
  return '';
}

type Invoke = (...args: (string | number)[]) => Promise<unknown>;

/** Our scripts' replies are parsed as RESP2-shaped arrays, so `replyMapping` is always left at its default ('legacy'). */
type LegacyOptions = Omit<RedisOptions, 'replyMapping'>;

function legacy<T extends object>(options: T): Omit<T, 'replyMapping'> {
  const { replyMapping: _ignored, ...rest } = options as T & { replyMapping?: unknown };
  return rest;
}

/** Sensible client settings for tracking: fail fast (the call runs untracked) rather than queue commands while Redis is away. */
function clientOptions(commandTimeoutMs: number, autoPipelining: boolean): LegacyOptions {
  return {
    enableAutoPipelining: autoPipelining,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: commandTimeoutMs,
    // ioredis waits this long (default 2 s) for a socket's 'close' on disconnect, and one whose
    // connection was refused never sends another: a process that could not reach Redis would
    // linger 2 s on exit (the CLI, when Redis is away). A live socket closes well within it.
    disconnectTimeout: commandTimeoutMs,
    // Exponential backoff with jitter, capped at 2 s: a fleet of workers does not reconnect in lockstep.
    retryStrategy: (times: number) => Math.round(Math.min(2000, 50 * 2 ** Math.min(times, 6)) * (0.5 + Math.random() / 2)),
  };
}

/**
 * Opens the client a {@link RedisConfig} describes; `owned` says whether closing it is ours to do.
 * `autoPipelining` applies to single nodes and Sentinel; a cluster client always pipelines, since
 * there every batched script carries one call.
 */
export function openRedis(config: RedisConfig, commandTimeoutMs: number, autoPipelining = true): { client: RedisClient; owned: boolean } {
  const base = clientOptions(commandTimeoutMs, autoPipelining);
  if (typeof config === 'string') return { client: new Redis(config, base), owned: true };
  if ('client' in config) return { client: config.client, owned: false };
  if ('cluster' in config) {
    const { redisOptions, ...rest } = legacy<ClusterOptions>(config.clusterOptions ?? {});
    const client = new Cluster([...config.cluster], {
      enableAutoPipelining: true,
      enableOfflineQueue: false,
      ...(base.retryStrategy ? { clusterRetryStrategy: base.retryStrategy } : {}),
      ...rest,
      redisOptions: { commandTimeout: commandTimeoutMs, maxRetriesPerRequest: 0, ...legacy(redisOptions ?? {}) },
    });
    return { client, owned: true };
  }
  return { client: new Redis({ ...base, ...legacy(config) }), owned: true };
}

/** Closes a client politely, then forcibly if Redis does not answer. */
export async function closeRedis(client: RedisClient, timeoutMs = 1000): Promise<void> {
  if (client.status === 'end') return;
  let timer: NodeJS.Timeout | undefined;
  // Auto-pipelined commands leave at the end of the loop's turn they were asked in (ioredis defers them
  // with setImmediate), or once the pipeline before them is answered; QUIT is never pipelined: sent at
  // once, it would overtake them and they would fail with "Connection is closed".
  const until = Date.now() + timeoutMs;
  while (client.autoPipelineQueueSize > 0 && client.status === 'ready' && Date.now() < until) await sleep(1);
  try {
    await Promise.race([client.quit().catch(() => undefined), new Promise((r) => (timer = setTimeout(r, timeoutMs)))]);
  } finally {
    clearTimeout(timer);
    client.disconnect();
  }
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
  /**
   * The claim batch and the settings its calls share (one tracker: always the same). A claim with
   * other settings starts a new batch; the old one still sends what it holds at its tick.
   */
  private claimBatch: { readonly settings: ClaimSettings; readonly batch: Batcher<ClaimItem, unknown> } | undefined;
  private readonly finishes: Batcher<FinishItem, number>;
  /** Calls per batched script: 1 on Redis Cluster, where one script must stay in one slot. */
  private readonly maxBatch: number;
  /** On Redis Cluster the batched scripts run one call each, key first (the `...One` scripts). */
  private readonly cluster: boolean;
  /** The history streams and bounds the finish and claim scripts write to; none on a cluster or when turned off. */
  private readonly history: { readonly keys: readonly [string, string]; readonly args: number[]; readonly failed: { readonly entries: number; readonly ageMs: number } } | undefined;

  /**
   * `autoPipelining: false` suits a worker's tracker: its hot-path scripts are batched per tick
   * already (Batcher), and ioredis' own pipelining on top only adds a deferred write and its
   * bookkeeping to every command (measured: 56 vs 42 µs of worker CPU per tracked call).
   */
  constructor(config: RedisConfig, commandTimeoutMs: number, private readonly k: Keys, private readonly log: Logger, options: { readonly autoPipelining: boolean; readonly history?: HistoryBounds | false } = { autoPipelining: true }) {
    const { client, owned } = openRedis(config, commandTimeoutMs, options.autoPipelining);
    this.client = client;
    this.owned = owned;
    // Without a listener ioredis prints every connection error; the tracker reports them once per transition instead.
    client.on('error', (err: unknown) => this.log.debug({ err }, 'redis connection error'));
    for (const [name, def] of Object.entries(scripts)) client.defineCommand(name, def);
    this.cluster = client instanceof Cluster;
    this.maxBatch = this.cluster ? 1 : 64;
    // The history streams share one slot, not the calls': on a cluster, whose finish runs one call each, none is kept.
    const history = options.history === undefined || options.history === false || this.cluster
      ? undefined
      : { keys: [k.history('done'), k.history('failed')] as const, args: historyArgs(options.history), failed: options.history.failed };
    this.history = history;
    this.finishes = new Batcher<FinishItem, number>((items) => {
      const args = this.batchArgs(items.length + (history ? 2 : 0));
      for (const i of items) args.push(i.key);
      if (history) args.push(...history.keys);
      for (const i of items) args.push(i.state, i.result, i.ttlMs, i.code);
      if (history) args.push(...history.args);
      // One character per call: '1' stored, '0' an outcome was there already.
      return this.run(this.cluster ? 'inflightFinishOne' : 'inflightFinish', ...args).then((reply) => {
        const flags = typeof reply === 'string' ? reply : '';
        if (flags.length !== items.length) throw new Error(`inflightFinish: expected ${items.length} replies, got ${JSON.stringify(reply)}`);
        return items.map((_, n) => (flags.charCodeAt(n) === 49 ? 1 : 0));
      });
      // At the end of the loop's turn: the run's reply, published in the same tick as its finish, then reaches
      // the AMQP socket first instead of waiting behind this write (which wakes Redis, on a busy machine at the
      // writer's expense). Only the ack waits for the finish, and it waits that much longer.
    }, this.maxBatch, 'turn');
  }

  get keys(): Keys {
    return this.k;
  }

  get connected(): boolean {
    return this.client.status === 'ready';
  }

  claim(callId: string, args: ClaimArgs): Promise<ClaimReply> {
    return this.claimsLike(args).push({ key: this.k.call(callId), attempt: args.attempt, owner: encodeOwner(args.worker, args.token, args.attempt, args.meta), runningTtlMs: args.runningTtlMs, finishedTtlMs: args.finishedTtlMs, mode: claimMode(args), retry: args.retry ? `${Math.floor(args.retry.deadline)} ${args.retry.delaysMs.join(' ')}` : '' }).then((raw) => this.claimed(callId, parseClaimReply(raw)));
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
    return this.claimBatch?.batch.sent();
  }

  /** The batch for claims with these settings. */
  private claimsLike(args: ClaimSettings): Batcher<ClaimItem, unknown> {
    const current = this.claimBatch;
    if (current && sameSettings(current.settings, args)) return current.batch;
    const settings: ClaimSettings = { worker: args.worker, leaseMs: args.leaseMs, maxAttempts: args.maxAttempts, workerLostCode: args.workerLostCode };
    const history = this.history;
    const batch = new Batcher<ClaimItem, unknown>((items) => {
      const out = this.batchArgs(items.length + (history ? 1 : 0));
      for (const i of items) out.push(i.key);
      if (history) out.push(history.keys[1]);
      out.push(settings.worker, settings.leaseMs, settings.maxAttempts, settings.workerLostCode);
      for (const i of items) out.push(i.owner, i.runningTtlMs, i.finishedTtlMs, i.mode, i.retry);
      if (history) out.push(history.failed.entries, history.failed.ageMs);
      // 0: all claimed fresh, each at the attempt it asked for; otherwise one reply per call, 0 for fresh ones.
      return this.run(this.cluster ? 'inflightClaimOne' : 'inflightClaim', ...out).then((reply) => {
        if (reply === 0) return items.map((i) => i.attempt);
        if (!Array.isArray(reply) || reply.length !== items.length) throw new Error(`inflightClaim: expected ${items.length} replies, got ${Array.isArray(reply) ? reply.length : String(reply)}`);
        return (reply as unknown[]).map((r, n) => (r === 0 ? (items[n] as ClaimItem).attempt : r));
      });
    }, this.maxBatch);
    this.claimBatch = { settings, batch };
    return batch;
  }

  /** A batched script's leading arguments: the key count, except on a cluster, whose `...One` scripts fix it at one. */
  private batchArgs(count: number): (string | number)[] {
    return this.cluster ? [] : [count];
  }

  finish(callId: string, a: FinishArgs): Promise<number> {
    const key = this.k.call(callId);
    const state = stateLetter(a.state);
    if (a.unclaimed) return this.run('inflightRecord', key, state, a.result, a.ttlMs, a.code, a.unclaimed.worker, a.unclaimed.meta).then(Number);
    return this.finishes.push({ key, state, result: a.result, ttlMs: a.ttlMs, code: a.code });
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
    const fn = (this.client as unknown as Record<ScriptName, Invoke>)[name];
    return fn.apply(this.client, args);
  }
}
