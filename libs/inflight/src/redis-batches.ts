// The two hot scripts' batches: everything one worker claims within one tick, or finishes within
// one turn of the event loop, goes to Redis as one EVALSHA (batch.ts), with the history streams'
// keys and bounds when they are kept. RedisStore (redis-store.ts) hands each claim and finish here.
import { Batcher } from './batch';
import { historyArgs } from './history-script';
import type { HistoryBounds, Keys } from './keys';
import { encodeOwner } from './record-codec';
import type { ScriptName } from './scripts';
import type { ClaimArgs } from './store-port';
import { claimMode, type ClaimMode } from './takeover';

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

export interface FinishItem {
  readonly key: string;
  /** One letter ({@link stateLetter}). */
  readonly state: string;
  readonly result: string;
  readonly ttlMs: number;
  readonly code: string;
}

/** Runs one script (RedisStore's `run`: tests count what it sends through it). */
export type ScriptRunner = (name: ScriptName, ...args: (string | number)[]) => Promise<unknown>;

/** The history streams and bounds the finish and claim scripts write to. */
interface HistoryStreams {
  readonly keys: readonly [string, string];
  readonly args: number[];
  readonly failed: { readonly entries: number; readonly ageMs: number };
}

/** The claim and finish batches of one store connection. */
export class ScriptBatches {
  /**
   * The claim batch and the settings its calls share (one tracker: always the same). A claim with
   * other settings starts a new batch; the old one still sends what it holds at its tick.
   */
  private claimBatch: { readonly settings: ClaimSettings; readonly batch: Batcher<ClaimItem, unknown> } | undefined;
  private readonly finishes: Batcher<FinishItem, number>;
  /** Calls per batched script: 1 on Redis Cluster, where one script must stay in one slot. */
  private readonly maxBatch: number;
  /** The history streams the scripts write to; none on a cluster or when turned off. */
  private readonly history: HistoryStreams | undefined;

  /** `cluster`: on Redis Cluster the batched scripts run one call each, key first (the `...One` scripts). */
  constructor(private readonly run: ScriptRunner, private readonly cluster: boolean, k: Keys, historyBounds: HistoryBounds | false | undefined) {
    this.maxBatch = this.cluster ? 1 : 64;
    // The history streams share one slot, not the calls': on a cluster, whose finish runs one call each, none is kept.
    const history = historyBounds === undefined || historyBounds === false || this.cluster
      ? undefined
      : { keys: [k.history('done'), k.history('failed')] as const, args: historyArgs(historyBounds), failed: historyBounds.failed };
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
      // At the end of the loop's turn: the finishes of all of the turn's callbacks share one script. It does
      // not put the run's reply on the wire first: amqplib's muxer moves every frame to the socket from an
      // immediate of its own, queued after this one, so at one call in flight a worker writes claim, finish,
      // reply, ack, in that order (strace). Deferring the finish a turn more to let the reply lead measured worse
      // (docs/benchmarks-history.md, 2026-12-04 late morning): the claim's and the finish's replies are then read
      // apart, and the worker spent more CPU per call.
    }, this.maxBatch, 'turn');
  }

  /** Queues a claim of the call under `key`; resolves to the claim script's raw reply for it. */
  claim(key: string, args: ClaimArgs): Promise<unknown> {
    return this.claimsLike(args).push({ key, attempt: args.attempt, owner: encodeOwner(args.worker, args.token, args.attempt, args.meta), runningTtlMs: args.runningTtlMs, finishedTtlMs: args.finishedTtlMs, mode: claimMode(args), retry: args.retry ? `${Math.floor(args.retry.deadline)} ${args.retry.delaysMs.join(' ')}` : '' });
  }

  /** Resolves once the claims queued so far are written; undefined when none waits. */
  claimsWritten(): Promise<void> | undefined {
    return this.claimBatch?.batch.sent();
  }

  /** Queues a finish; resolves 1 stored, 0 an outcome was there already. */
  finish(item: FinishItem): Promise<number> {
    return this.finishes.push(item);
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
}
