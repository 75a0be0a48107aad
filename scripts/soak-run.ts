// The soak engine behind `npm run soak` (scripts/soak.ts) and its short CI
// version (test/integration/faults/soak.int.test.ts): `concurrency` closed
// loops of calls from one client, through a fault proxy, to tracked workers
// in child processes (scripts/soak-worker.ts), each behind a proxy of its
// own, while faults are injected at random intervals: client connections
// cut, a worker's connections cut or stalled, a worker SIGKILLed (and
// replaced). Every `reportEveryMs` it reports calls done, errors by code,
// duplicates, lost calls and latency; see {@link SoakReport}.
// With `cluster` (a RabbitCluster of extra nodes), the client and the workers
// are given every node's URL instead of a proxy, and the faults include node
// losses: a node's app stopped and started again, or its VM killed and booted.
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { RpcClient } from '@warren/amqp';
import { AmqpConnection } from '@warren/amqp-transport';
import { InflightView, callWithRecovery } from '@warren/inflight';
import { wireErrorOf } from '@warren/jsonrpc';
import { percentile } from '@warren/cli';
import { FaultProxy, spawnTs, type RabbitCluster, type RabbitNode, type TsChild } from '@warren/testkit';
import { deleteRedisKeys } from '../test/integration/helpers';
import { TestNamespace } from '../test/support/amqp';
import { multiKey, runsKey, workMethod, workService, type WorkParams } from './soak-worker';

export type FaultKind = 'cut-client' | 'cut-worker' | 'stall-worker' | 'kill-worker' | 'stop-node' | 'kill-node';

/** Faults that need a proxy in front of one node; a cluster run has none. */
export const proxyFaults: readonly FaultKind[] = ['cut-client', 'cut-worker', 'stall-worker'];
/** The faults a run injects unless told otherwise, on one node and on a cluster. */
export const singleNodeFaults: readonly FaultKind[] = ['cut-client', 'cut-worker', 'stall-worker', 'kill-worker'];
export const clusterFaults: readonly FaultKind[] = ['stop-node', 'kill-node', 'kill-worker'];

export interface SoakOptions {
  readonly durationMs: number;
  readonly concurrency: number;
  /** Worker processes kept running. @default 3 */
  readonly workers?: number;
  /** Deadline of each call. @default 10000 */
  readonly timeoutMs?: number;
  /** A fault every this many ms (uniformly random in the range). @default [5000, 15000] */
  readonly faultEveryMs?: readonly [number, number];
  readonly faults?: readonly FaultKind[];
  /** How long one call's handler runs (uniform). @default [0, 20] */
  readonly workMs?: readonly [number, number];
  /** Use callWithRecovery: a reply lost with its connection is recovered from the in-flight store. @default false */
  readonly recover?: boolean;
  /** @default 60000 */
  readonly reportEveryMs?: number;
  readonly amqpUrl: string;
  readonly redisUrl: string;
  /** Run on these nodes instead of `amqpUrl`; allows the faults 'stop-node' and 'kill-node'. */
  readonly cluster?: RabbitCluster;
  /** Called with each period's report as it closes. */
  readonly onReport?: (report: SoakReport) => void;
  /** Progress lines (faults, workers). */
  readonly log?: (line: string) => void;
  /** Ends the run early (Ctrl-C): the calls in flight finish, then the summary and the cleanup as usual. */
  readonly signal?: AbortSignal;
}

/** One period (a minute, by default), or the whole run. */
export interface SoakReport {
  readonly period: number;
  readonly seconds: number;
  /** Calls settled (with a result or an error). */
  readonly calls: number;
  readonly ok: number;
  /** Error answers by JSON-RPC code (a local failure by its wire code; the error name for anything else). */
  readonly errors: Record<string, number>;
  /** Calls whose handler ran again after a run that was not cut short by its worker's death. Must be 0. */
  readonly duplicates: number;
  /** Runs repeated because the worker that ran the earlier one was killed (taken over, as promised). */
  readonly rerunsAfterKill: number;
  /** Calls that did not settle by their deadline plus `lostSlackMs`. Must be 0. */
  readonly lost: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
  readonly faults: Partial<Record<FaultKind, number>>;
}

export interface SoakSummary {
  readonly options: Omit<SoakOptions, 'onReport' | 'log' | 'amqpUrl' | 'redisUrl' | 'signal' | 'cluster'>;
  readonly periods: SoakReport[];
  readonly total: SoakReport;
  readonly pass: boolean;
}

/** A call unsettled this long past its deadline counts as lost (and its loop moves on). */
const lostSlackMs = 5000;

class Period {
  calls = 0;
  ok = 0;
  duplicates = 0;
  rerunsAfterKill = 0;
  lost = 0;
  readonly errors: Record<string, number> = {};
  readonly latencies: number[] = [];
  readonly faults: Partial<Record<FaultKind, number>> = {};
  constructor(readonly period: number, readonly startedAt: number) {}

  report(now: number): SoakReport {
    const sorted = Float64Array.from(this.latencies).sort();
    const pct = (p: number): number => (sorted.length === 0 ? 0 : Math.round(percentile(sorted, p / 100)));
    return {
      period: this.period, seconds: Math.round((now - this.startedAt) / 100) / 10, calls: this.calls, ok: this.ok, errors: { ...this.errors },
      duplicates: this.duplicates, rerunsAfterKill: this.rerunsAfterKill, lost: this.lost,
      p50Ms: pct(50), p99Ms: pct(99), maxMs: Math.round(sorted[sorted.length - 1] ?? 0), faults: { ...this.faults },
    };
  }
}

interface Worker {
  readonly instanceId: string;
  /** Absent on a cluster run. */
  readonly proxy: FaultProxy | undefined;
  readonly child: TsChild;
}

const pick = <T>(items: readonly T[]): T | undefined => items[Math.floor(Math.random() * items.length)];
const between = ([lo, hi]: readonly [number, number]): number => lo + Math.random() * (hi - lo);

/** Runs the soak and resolves with every period's report and the total; cleans up whatever happens. */
export async function runSoak(o: SoakOptions): Promise<SoakSummary> {
  const log = o.log ?? (() => undefined);
  const timeoutMs = o.timeoutMs ?? 10_000;
  const kinds = o.faults ?? (o.cluster ? clusterFaults : singleNodeFaults);
  const cluster = o.cluster;
  const misfits = kinds.filter((k) => (cluster ? proxyFaults.includes(k) : k === 'stop-node' || k === 'kill-node'));
  if (misfits.length > 0) throw new RangeError(`faults ${misfits.join(', ')} need ${cluster ? 'a single node behind a proxy (not --cluster)' : '--cluster'}`);
  const workMs = o.workMs ?? [0, 20];
  const ns = new TestNamespace(`soak-${randomBytes(4).toString('hex')}`);
  ns.service(workService);
  const { namespace } = ns;
  const prefix = namespace;
  const redis = new Redis(o.redisUrl, { maxRetriesPerRequest: 1 });
  const clientProxy = cluster ? undefined : await FaultProxy.forUrl(o.amqpUrl);
  /** Nodes down now (a cluster run loses one at a time, so a majority always remains). */
  const down = new Set<string>();
  const nodeUrls = (i: number): string[] => (cluster ? cluster.urls(cluster.nodes[i % cluster.nodes.length]) : []);
  /** Live workers, the ones faults pick from. */
  const workers: Worker[] = [];
  const killed = new Set<string>();
  let workerSeq = 0;
  // Everything ever started, released at the end whatever happened (killing an exited child is a no-op).
  const proxies: FaultProxy[] = clientProxy ? [clientProxy] : [];
  const children: TsChild[] = [];

  const startWorker = async (): Promise<void> => {
    const seq = workerSeq++;
    const instanceId = `w${seq}`;
    const proxy = cluster ? undefined : await FaultProxy.forUrl(o.amqpUrl);
    if (proxy) proxies.push(proxy);
    const child = spawnTs(path.join(__dirname, 'soak-worker.ts'), [], {
      // On a cluster, worker i starts on node i + 1 (the client is on node 0), so calls cross nodes.
      WORK_AMQP_URL: proxy ? proxy.url(o.amqpUrl) : nodeUrls(seq + 1).join(','), WORK_REDIS_URL: o.redisUrl, WORK_NAMESPACE: namespace, WORK_PREFIX: prefix,
      WORK_INSTANCE: instanceId, WORK_PREFETCH: '64', WORK_LEASE_MS: '2000', WORK_MAX_ATTEMPTS: '3', LOG_LEVEL: 'warn',
    });
    children.push(child);
    await child.waitForLine(/^ready$/, 60_000);
    workers.push({ instanceId, proxy, child });
    log(`worker ${instanceId} ready`);
  };

  const connection = new AmqpConnection({ urls: clientProxy ? clientProxy.url(o.amqpUrl) : nodeUrls(0), heartbeatSeconds: 1, socketTimeoutMs: 1000, connectionName: `${namespace}-client`, reconnect: { initialDelayMs: 50, maxDelayMs: 500 } });
  const view = o.recover ? new InflightView({ redis: o.redisUrl, keyPrefix: prefix }) : undefined;
  let client: RpcClient | undefined;
  try {
    await Promise.all(Array.from({ length: o.workers ?? 3 }, startWorker));
    await connection.start();
    client = await RpcClient.create(connection, { namespace, defaultTimeoutMs: timeoutMs }, true);
    return await drive(client);
  } finally {
    await client?.close().catch(() => undefined);
    await connection.close();
    await view?.close().catch(() => undefined);
    await Promise.all(children.map((child) => child.kill('SIGKILL')));
    await Promise.all(proxies.map((p) => p.close()));
    // A cluster's queues go with its nodes.
    if (!cluster) await ns.destroy(o.amqpUrl).catch(() => undefined);
    await deleteRedisKeys(`${prefix}:`, o.redisUrl).catch(() => undefined);
    redis.disconnect();
  }

  async function drive(c: RpcClient): Promise<SoakSummary> {
    const started = Date.now();
    let endAt = started + o.durationMs;
    o.signal?.addEventListener('abort', () => (endAt = Math.min(endAt, Date.now())), { once: true });
    const reportEvery = o.reportEveryMs ?? 60_000;
    const periods: SoakReport[] = [];
    const total = new Period(0, started);
    let current = new Period(1, started);
    const count = (f: (p: Period) => void): void => (f(current), f(total));
    let running = true;
    // A report or fault loop that fails ends the run (and the cleanup in runSoak runs); its error is rethrown.
    let failure: unknown;
    const stopOn = (err: unknown): void => {
      failure ??= err;
      running = false;
      endAt = Math.min(endAt, Date.now());
    };

    const oneCall = async (): Promise<void> => {
      const callId = c.nextCallId();
      const n = Math.floor(Math.random() * 1e9);
      const params = { ms: Math.round(between(workMs)), n } satisfies WorkParams;
      const t0 = performance.now();
      const deadline = Date.now() + timeoutMs;
      // With recovery, a -32007 is followed by a wait for the stored outcome, until the same deadline.
      const call = view ? callWithRecovery<number>(c, view, workMethod, params, { timeoutMs, deadline, id: callId }) : c.call<number>(workMethod, params, { timeoutMs, id: callId });
      const answered = call.then(
        (value) => (value === n * 2 ? 'ok' : 'wrong-result'),
        (err: unknown) => String(wireErrorOf(err)?.code ?? (err instanceof Error ? err.name : 'unknown')),
      );
      let timer: NodeJS.Timeout | undefined;
      const hung = new Promise<'lost'>((resolve) => (timer = setTimeout(() => resolve('lost'), deadline + lostSlackMs - Date.now())));
      const outcome = await Promise.race([answered, hung]);
      clearTimeout(timer);
      const ms = performance.now() - t0;
      count((p) => {
        if (outcome === 'lost') return void p.lost++;
        p.calls++;
        if (outcome === 'ok') {
          p.ok++;
          p.latencies.push(ms);
        } else p.errors[outcome] = (p.errors[outcome] ?? 0) + 1;
      });
    };

    // Duplicates: the workers put every call id that ran more than once in one set; its run lists say where.
    const seenMulti = new Set<string>();
    const runsOf = async (ids: readonly string[]): Promise<string[][]> => {
      const pipeline = redis.pipeline();
      for (const id of ids) pipeline.lrange(runsKey(prefix, id), 0, -1);
      return ((await pipeline.exec()) ?? []).map(([, v]) => (Array.isArray(v) ? (v as string[]) : []));
    };
    // Excused only if every earlier run was on a worker we killed: that run was cut short and taken over.
    const afterKill = (runs: readonly string[]): boolean => runs.slice(0, -1).every((instance) => killed.has(instance));
    const classifyNew = async (): Promise<void> => {
      const ids = (await redis.smembers(multiKey(prefix))).filter((id) => !seenMulti.has(id));
      const lists = await runsOf(ids);
      ids.forEach((id, i) => {
        seenMulti.add(id);
        const excused = afterKill(lists[i] ?? []);
        count((p) => void (excused ? p.rerunsAfterKill++ : p.duplicates++));
      });
    };

    const reports = (async (): Promise<void> => {
      // The last period (the one that reaches the end) is reported after the drain, with the calls that finish in it.
      for (let next = started + reportEvery; next < endAt; next += reportEvery) {
        while (running && Date.now() < next) await sleep(Math.min(250, next - Date.now()));
        if (!running) return;
        await classifyNew();
        const r = current.report(Date.now());
        periods.push(r);
        o.onReport?.(r);
        current = new Period(current.period + 1, Date.now());
      }
    })().catch(stopOn);

    // Kinds take turns (in a shuffled order), so even a short run sees each of them.
    const order = [...kinds].sort(() => Math.random() - 0.5);
    const faults = (async (): Promise<void> => {
      for (let turn = 0; ; turn++) {
        const at = Date.now() + between(o.faultEveryMs ?? [5000, 15_000]);
        while (running && Date.now() < at) await sleep(Math.min(250, at - Date.now()));
        if (!running || Date.now() > endAt - 2000) return;
        const kind = order[turn % order.length];
        const worker = pick(workers);
        if (!kind || !worker) continue;
        count((p) => void (p.faults[kind] = (p.faults[kind] ?? 0) + 1));
        log(`${new Date().toISOString()} fault: ${kind}${kind === 'cut-client' || kind.endsWith('-node') ? '' : ` ${worker.instanceId}`}`);
        await inject(kind, worker);
      }
    })().catch(stopOn);

    await Promise.all(Array.from({ length: o.concurrency }, async () => {
      while (Date.now() < endAt) await oneCall();
    }));
    running = false;
    await Promise.all([reports, faults]);
    if (failure !== undefined) throw failure;
    // A redelivery that runs after its caller had the answer shows up late: wait out a lease, then look again.
    await sleep(3000);
    await classifyNew();
    const now = Date.now();
    if (current.calls > 0 || current.lost > 0 || periods.length === 0) {
      const r = current.report(now);
      periods.push(r);
      o.onReport?.(r);
    }
    // The total is judged on the final run lists (a call may have run again since it was first seen).
    const lists = await runsOf([...seenMulti]);
    total.duplicates = lists.filter((r) => !afterKill(r)).length;
    total.rerunsAfterKill = lists.length - total.duplicates;
    const t = total.report(now);
    const { onReport: _r, log: _l, amqpUrl: _a, redisUrl: _u, signal: _s, cluster: _c, ...options } = o;
    return { options, periods, total: t, pass: t.duplicates === 0 && t.lost === 0 && t.calls > 0 };
  }

  /** Takes one node down (never a second one: quorum queues need a majority), then brings it back. */
  async function loseNode(how: 'stop' | 'kill'): Promise<void> {
    const node: RabbitNode | undefined = cluster && down.size === 0 ? pick(cluster.nodes) : undefined;
    if (!cluster || !node) return;
    down.add(node.name);
    log(`${new Date().toISOString()} ${how === 'stop' ? 'stop_app' : 'SIGKILL'} ${node.name}`);
    try {
      if (how === 'stop') {
        await cluster.stopApp(node);
        await sleep(between([2000, 5000]));
        await cluster.startApp(node);
      } else {
        await cluster.kill(node);
        // Booting again takes a while (tens of seconds on a loaded machine); no other node goes meanwhile.
        await cluster.restart(node);
      }
      log(`${new Date().toISOString()} ${node.name} back`);
    } finally {
      down.delete(node.name);
    }
  }

  async function inject(kind: FaultKind, worker: Worker): Promise<void> {
    switch (kind) {
      case 'cut-client':
        clientProxy?.cutAll();
        return;
      case 'cut-worker':
        worker.proxy?.cutAll();
        return;
      case 'stall-worker':
        // Packets held, no reset: only heartbeats (1 s) tell both ends the connection is dead.
        worker.proxy?.stall();
        await sleep(between([2000, 4000]));
        worker.proxy?.resume();
        return;
      case 'stop-node':
        return loseNode('stop');
      case 'kill-node':
        return loseNode('kill');
      case 'kill-worker':
        killed.add(worker.instanceId);
        await worker.child.kill('SIGKILL');
        workers.splice(workers.indexOf(worker), 1);
        // Its proxy and output go with it, not at the end of a long run.
        children.splice(children.indexOf(worker.child), 1);
        if (worker.proxy) {
          proxies.splice(proxies.indexOf(worker.proxy), 1);
          await worker.proxy.close();
        }
        await startWorker();
        return;
    }
  }
}

