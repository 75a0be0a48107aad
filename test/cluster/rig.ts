// The cluster stage's rig: a three-node RabbitMQ cluster and a three-master
// Redis Cluster started for the file, services and clients connected to the
// cluster's URL list (each with its own first node), and the bookkeeping of
// a storm of tracked calls: which settled how, which ran more than once, and
// how long after a node loss the first call succeeded.
import { setTimeout as sleep } from 'node:timers/promises';
import { Cluster } from 'ioredis';
import { RpcClient, WarrenService, type ClientOptions, type ServiceMethod, type ServiceOptions } from '@warren/amqp';
import { AmqpConnection } from '@warren/amqp-transport';
import { InflightView, callWithRecovery, createRedisTracker, type StoreCallTracker } from '@warren/inflight';
import { wireErrorOf } from '@warren/jsonrpc';
import { RabbitCluster, RedisServers, Teardown, type RabbitNode, type RedisNode } from '@warren/testkit';
import { runsKey, workMethods } from '../../scripts/soak-worker';
import { TestNamespace } from '../support/amqp';

export type Outcome = 'ok' | 'wrong' | 'hung' | number | string;

/** A failed call's wire code (a local failure by its wire form), else the thrown value as text. */
export const outcomeOf = (err: unknown): Outcome => wireErrorOf(err)?.code ?? String(err);

/** How long past its deadline a call may take to settle before it counts as hung. */
export const hungSlackMs = 5000;

export class ClusterRig {
  readonly td = new Teardown();
  readonly ns = new TestNamespace();
  readonly prefix = this.ns.namespace;
  readonly connections = new Map<string, AmqpConnection>();
  /** Each service instance's tracker, by instance id: their health says whether tracking ever lapsed. */
  readonly trackers = new Map<string, StoreCallTracker>();
  redis!: Cluster;

  private constructor(readonly rabbit: RabbitCluster, readonly redisServers: RedisServers, readonly redisNodes: RedisNode[]) {}

  static async start(): Promise<ClusterRig> {
    const [rabbit, redis] = await Promise.allSettled([RabbitCluster.start({ size: 3 }), RedisServers.cluster(3)]);
    if (rabbit.status === 'rejected' || redis.status === 'rejected') {
      if (rabbit.status === 'fulfilled') await rabbit.value.stop();
      if (redis.status === 'fulfilled') await redis.value.servers.stop();
      throw rabbit.status === 'rejected' ? rabbit.reason : (redis as PromiseRejectedResult).reason;
    }
    const rig = new ClusterRig(rabbit.value, redis.value.servers, redis.value.nodes);
    rig.td.add(() => rabbit.value.stop());
    rig.td.add(() => redis.value.servers.stop());
    rig.redis = new Cluster(rig.redisNodes.map((n) => ({ ...n })), { redisOptions: { maxRetriesPerRequest: 1 } });
    rig.td.add(() => rig.redis.disconnect());
    return rig;
  }

  get nodes(): RabbitNode[] {
    return this.rabbit.nodes;
  }

  /** A connection to the whole cluster that tries the nodes in `order` first, then the rest. */
  async connect(role: string, order: readonly RabbitNode[]): Promise<AmqpConnection> {
    const urls = [...order, ...this.nodes.filter((n) => !order.includes(n))].map((n) => n.url);
    const connection = new AmqpConnection({ urls, connectionName: `${this.prefix}-${role}`, heartbeatSeconds: 2, socketTimeoutMs: 2000, reconnect: { initialDelayMs: 100, maxDelayMs: 1000 } });
    await connection.start();
    this.td.add(() => connection.close());
    this.connections.set(role, connection);
    return connection;
  }

  /** A service on `first` (failing over to the others), tracked in the Redis Cluster; its queues default to quorum. */
  async service(order: readonly RabbitNode[], options: Omit<ServiceOptions, 'namespace' | 'tracker'>): Promise<WarrenService> {
    // A lease long enough that a loaded machine's pauses never look like a dead worker (no worker dies here),
    // and a command timeout long enough that a slow Redis never looks like a lost one (calls would run untracked).
    const tracker = createRedisTracker({ redis: { cluster: this.redisNodes }, keyPrefix: this.prefix, leaseMs: 10_000, heartbeatMs: 1000, commandTimeoutMs: 5000 });
    this.trackers.set(options.instanceId ?? options.name, tracker);
    const connection = await this.connect(`${options.name}-${options.instanceId ?? 'x'}`, order);
    const s = await WarrenService.start(connection, { namespace: this.ns.namespace, ...options, tracker });
    this.td.add(() => s.close());
    return s;
  }

  /** The `work.run` methods of the soak worker (each run recorded under its call id in the Redis Cluster). */
  work(method: string): Record<string, ServiceMethod> {
    return workMethods(this.redis, this.prefix, method);
  }

  async client(role: string, order: readonly RabbitNode[], options: Omit<ClientOptions, 'namespace'> = {}): Promise<RpcClient> {
    const c = await RpcClient.create(await this.connect(role, order), { namespace: this.ns.namespace, ...options });
    this.td.add(() => c.close());
    return c;
  }

  view(): InflightView {
    const view = new InflightView({ redis: { cluster: this.redisNodes }, keyPrefix: this.prefix });
    this.td.add(() => view.close());
    return view;
  }

  /** Runs of one call, as recorded by its handler (one entry per run: the instance that ran it). */
  async runs(callId: string): Promise<string[]> {
    return this.redis.lrange(runsKey(this.prefix, callId), 0, -1);
  }
}

export interface TrackedCall {
  readonly callId: string;
  readonly deadline: number;
  /** Settles with the outcome, or 'hung' if the call had not settled `hungSlackMs` past its deadline. */
  readonly outcome: Promise<Outcome>;
}

/** A call through callWithRecovery whose answer must be `2n`, watched for hanging. */
export function trackedCall(client: RpcClient, view: InflightView, method: string, params: { ms: number; n: number }, timeoutMs: number): TrackedCall {
  const callId = client.nextCallId();
  const deadline = Date.now() + timeoutMs;
  const answered = callWithRecovery<number>(client, view, method, params, { timeoutMs, deadline, id: callId }).then((v): Outcome => (v === 2 * params.n ? 'ok' : 'wrong'), outcomeOf);
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<Outcome>((resolve) => (timer = setTimeout(() => resolve('hung'), timeoutMs + hungSlackMs)));
  return { callId, deadline, outcome: Promise.race([answered, hung]).finally(() => clearTimeout(timer)) };
}

/** Counts outcomes: `{ ok: 297, "-32007": 3 }`. */
export function tally(outcomes: readonly Outcome[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const o of outcomes) counts[String(o)] = (counts[String(o)] ?? 0) + 1;
  return counts;
}

/**
 * Calls `method` one after another from `since` on until one succeeds; resolves with
 * the time from `since` to that success. Each try has its own short deadline.
 */
export async function firstSuccessAfter(client: RpcClient, method: string, since: number, giveUpMs = 120_000): Promise<number> {
  for (let i = 0; Date.now() - since < giveUpMs; i++) {
    const tried = Date.now();
    const ok = await client.call<number>(method, { ms: 1, n: i }, { timeoutMs: 3000 }).then((v) => v === 2 * i, () => false);
    if (ok) return Date.now() - since;
    // A refusal comes back at once while the client reconnects: pace the tries, do not spin.
    if (Date.now() - tried < 100) await sleep(100);
  }
  throw new Error(`no call succeeded within ${giveUpMs} ms of the node loss`);
}
