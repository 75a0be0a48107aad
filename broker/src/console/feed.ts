import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '@warren/logger';
import type { CallGate, GatewayCall } from '../gateway-calls';
import type { ClusterCall, InflightSource } from '../inflight';
import type { LiveCatalogue } from '../live-catalogue';
import { FeedClient, frame } from './feed-client';
import type { FeedEvents, InflightHead } from './feed-events';
import { InflightDiff } from './inflight-delta';
import type { ResolvedConsoleOptions } from './options';
import { OutcomeLog, outcomeState, type Outcome, type OutcomeState } from './outcomes';
import { Throughput } from './throughput';

/** What the feed watches. */
export interface ConsoleFeedDeps {
  readonly gate: CallGate;
  readonly catalogue: LiveCatalogue;
  readonly inflight: InflightSource | undefined;
  readonly logger: Logger;
}

/** Calls whose end the watcher looks up per tick at most (a burst of endings waits for the next ticks). */
const maxLookupsPerTick = 64;
/** Bucket of the Throughput view. */
const throughputBucketMs = 5000;
const terminal: ReadonlySet<string> = new Set<OutcomeState>(['done', 'failed', 'cancelled', 'expired']);

/**
 * The console's live feed: ONE watcher per broker (a timer that reads the
 * in-flight store while at least one browser listens), fanned out to every
 * connected browser as server-sent events. Bounded: at most `maxClients`
 * browsers; the calls in flight go to each in frames of bounded size, as fast as it reads them,
 * coalesced per call while it is behind (feed-client.ts); a browser that stops reading and leaves
 * more than `maxBufferedBytes` unread is dropped (it reconnects to a fresh list).
 *
 * Events: `inflight` (a newcomer's first: the first frame of the cluster's calls and the gateway's
 * own; `more: true` when frames follow), `inflight-delta` (the rest of the list, then every tick:
 * the calls new or changed, and the ids gone; see {@link InflightDiff}),
 * `outcomes` (new finished calls; the first one after connecting carries the
 * recent history, with `reset: true`), `throughput` (every tick), `catalogue`
 * (the set of services, instances or methods changed: fetch /services again).
 */
export class ConsoleFeed {
  private readonly clients = new Set<FeedClient>();
  private readonly outcomes: OutcomeLog;
  private readonly throughput: Throughput;
  private readonly log: Logger;
  private timer: NodeJS.Timeout | undefined;
  private keepAlive: NodeJS.Timeout | undefined;
  private ticking = false;
  private closed = false;
  /** Calls running at the last tick, to notice which ended since. */
  private running = new Map<string, ClusterCall>();
  /** Calls that left the store and are still to be looked up. */
  private ended: ClusterCall[] = [];
  private fresh: Outcome[] = [];
  private readonly diff = new InflightDiff();
  private catalogueKey = '';
  private catalogueVersion = 0;
  private readonly unsubscribe: () => void;

  constructor(private readonly deps: ConsoleFeedDeps, private readonly o: ResolvedConsoleOptions) {
    this.log = deps.logger.child({ component: 'console-feed' });
    this.outcomes = new OutcomeLog(o.maxOutcomes);
    this.throughput = new Throughput(throughputBucketMs, o.throughputMinutes * 60_000);
    // The gateway's own calls are recorded whether or not a browser listens: they are exact and cost nothing to keep.
    this.unsubscribe = deps.gate.onSettled((call, ms, code) => this.gatewayCallEnded(call, ms, code));
  }

  get size(): number {
    return this.clients.size;
  }

  /** Whether one more browser may connect. */
  hasRoom(): boolean {
    return !this.closed && this.clients.size < this.o.maxClients;
  }

  /** Streams the feed on a response whose event-stream head is already written. */
  attach(request: IncomingMessage, response: ServerResponse): void {
    const client = new FeedClient(response, this.o);
    this.clients.add(client);
    const gone = (): void => {
      this.clients.delete(client);
      if (this.clients.size === 0) this.stop();
    };
    request.once('close', gone);
    response.once('close', gone);
    client.send('hello', { pollMs: this.o.pollMs, bucketMs: throughputBucketMs, inflight: this.deps.inflight !== undefined, now: Date.now() });
    client.send('outcomes', { reset: true, items: this.outcomes.recent() });
    client.send('catalogue', { version: this.catalogueVersion });
    this.start();
    // The newcomer gets a snapshot at once rather than at the next tick.
    void this.tick();
  }

  /** Ends every stream and stops the watcher. Idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.unsubscribe();
    this.stop();
    for (const client of this.clients) client.end();
    this.clients.clear();
  }

  private start(): void {
    if (this.timer !== undefined || this.closed) return;
    this.timer = setInterval(() => void this.tick(), this.o.pollMs);
    this.keepAlive = setInterval(() => {
      for (const client of this.clients) client.comment();
    }, this.o.keepAliveMs);
  }

  private stop(): void {
    clearInterval(this.timer);
    clearInterval(this.keepAlive);
    this.timer = undefined;
    this.keepAlive = undefined;
    // Whatever ran while nobody watched is not followed: its end would be looked up hours later.
    this.running.clear();
    this.ended = [];
    this.diff.reset();
  }

  /** One read of the store, sent to every browser; a tick still under way (slow Redis) makes the next one skip. */
  private async tick(): Promise<void> {
    if (this.ticking || this.closed || this.clients.size === 0) return;
    this.ticking = true;
    try {
      const source = this.deps.inflight;
      let calls: readonly ClusterCall[] = [];
      let error: string | undefined;
      if (source) {
        try {
          calls = await source.list();
          this.follow(calls);
          await this.lookUpEnded(source);
        } catch (err) {
          this.log.debug({ err }, 'in-flight store unavailable');
          error = 'in-flight store unavailable';
        }
      }
      const now = Date.now();
      this.sendInflight({ at: now, configured: source !== undefined, ...(error === undefined ? {} : { error }) }, calls);
      if (this.fresh.length > 0) this.broadcast('outcomes', { items: this.fresh.splice(0) });
      this.broadcast('throughput', this.throughput.snapshot(now));
      const key = catalogueKey(this.deps.catalogue);
      if (key !== this.catalogueKey) {
        this.catalogueKey = key;
        this.broadcast('catalogue', { version: ++this.catalogueVersion });
      }
    } finally {
      this.ticking = false;
    }
  }

  private follow(calls: readonly ClusterCall[]): void {
    const now = new Map(calls.map((c) => [c.callId, c]));
    for (const [id, call] of this.running) if (!now.has(id) && !this.outcomes.has(id)) this.ended.push(call);
    this.running = now;
  }

  /** How the calls that left the store ended, from their stored outcome; calls requeued or forgotten are let go. */
  private async lookUpEnded(source: InflightSource): Promise<void> {
    if (!source.status || this.ended.length === 0) return;
    const status = source.status.bind(source);
    const batch = this.ended.splice(0, maxLookupsPerTick);
    const found = await Promise.all(batch.map((call) => status(call.callId).catch(() => undefined)));
    batch.forEach((call, i) => {
      const s = found[i];
      if (s === undefined || !terminal.has(s.state) || this.outcomes.has(call.callId)) return;
      const code = s.response && 'error' in s.response ? s.response.error.code : undefined;
      const endedAt = s.finishedAt ?? Date.now();
      const startedAt = s.startedAt ?? call.startedAt;
      this.add({
        callId: call.callId,
        method: s.method ?? call.method,
        ...optional('service', s.service ?? call.service),
        ...optional('worker', s.worker ?? call.worker),
        ...optional('attempt', s.attempt ?? call.attempt),
        state: s.state as OutcomeState,
        ...optional('code', code),
        ...optional('durationMs', startedAt === undefined ? undefined : Math.max(0, endedAt - startedAt)),
        endedAt,
        seenBy: 'watcher',
      });
    });
  }

  private gatewayCallEnded(call: GatewayCall, ms: number, code: number | undefined): void {
    const service = this.deps.catalogue.current().methods.get(call.method)?.service;
    this.add({ callId: call.callId, method: call.method, ...optional('service', service), state: outcomeState(code), ...optional('code', code), durationMs: Math.round(ms * 10) / 10, endedAt: Date.now(), seenBy: 'gateway' });
  }

  private add(outcome: Outcome): void {
    if (!this.outcomes.add(outcome)) return;
    // Method names of unknown methods come from callers: one label for them all, as in the metrics.
    const known = outcome.method === 'rpc.discover' || this.deps.catalogue.current().methods.has(outcome.method);
    this.throughput.record(known ? outcome.method : '(unknown)', outcome.durationMs, outcome.state === 'done', outcome.endedAt);
    if (this.clients.size > 0) this.fresh.push(outcome);
  }

  /** This tick's calls: the whole list to browsers that have none yet, what changed to the others (each call serialized once). */
  private sendInflight(head: InflightHead, calls: readonly ClusterCall[]): void {
    const delta = this.diff.next(calls, this.deps.gate.list());
    let whole: ReturnType<InflightDiff['snapshot']> | undefined;
    for (const client of [...this.clients]) {
      const changes = client.fresh ? (whole ??= this.diff.snapshot()) : delta;
      if (!client.queueInflight(head, changes.calls, changes.gateway)) this.drop(client);
    }
    if (this.clients.size === 0) this.stop();
  }

  private broadcast<E extends keyof FeedEvents>(event: E, data: FeedEvents[E]): void {
    if (this.clients.size === 0) return;
    // Serialized once for every browser.
    const text = frame(event, data);
    for (const client of [...this.clients]) this.deliver(client, text);
    if (this.clients.size === 0) this.stop();
  }

  private deliver(client: FeedClient, text: string): void {
    if (!client.write(text)) this.drop(client);
  }

  private drop(client: FeedClient): void {
    if (!this.clients.delete(client)) return;
    this.log.info({ buffered: client.buffered }, 'console client dropped: it stopped reading');
  }
}

/** What the Services view shows, reduced to whether it changed. */
function catalogueKey(catalogue: LiveCatalogue): string {
  const c = catalogue.current();
  return JSON.stringify(c.services.map((s) => [s.name, s.instances.map((i) => [i.instanceId, i.tracking?.state]), s.notifications]).concat([...c.methods.keys()].sort()));
}

function optional<K extends string, V>(key: K, value: V | undefined): Partial<Record<K, V>> {
  return value === undefined ? {} : ({ [key]: value } as Record<K, V>);
}
