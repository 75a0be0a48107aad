// The fault rig: a client and tracked worker services talking to the real
// RabbitMQ through fault proxies (one for clients, one for workers), their
// trackers talking to Redis through a third, and two notification sinks. The
// workers run the soak's `work.run` (scripts/soak-worker.ts), which records
// each run in Redis (directly, never through a proxy) so a test can tell
// whether any call ran twice. Every scenario test builds one.
import { Redis } from 'ioredis';
import { RpcClient, WarrenService } from '@warren/amqp';
import { AmqpConnection, type ConnectionOptions } from '@warren/amqp-transport';
import type { RetryPolicy } from '../../../libs/amqp/src/runtime/retry';
import { createRedisTracker, type StoreCallTracker } from '@warren/inflight';
import path from 'node:path';
import { FaultProxy, amqpUrl, redisUrl, spawnTs, type Teardown, type TsChild } from '@warren/testkit';
import { TestNamespace } from '../../support/amqp';
import { noteMethod, runsKey, workMethods, workService } from '../../../scripts/soak-worker';
import { deleteRedisKeys } from '../helpers';

export { noteMethod, workMethod, workService, type WorkParams } from '../../../scripts/soak-worker';
export const sinkServices = ['sinka', 'sinkb'] as const;

export interface RigOptions {
  /** In-process tracked worker instances. @default 2 */
  readonly workers?: number;
  /** @default 64 */
  readonly prefetch?: number;
  /** Tracker lease. @default 2000 */
  readonly leaseMs?: number;
  /**
   * AMQP heartbeat of every rig connection, seconds. A test that stalls a proxy (packets held, no reset)
   * gives 1, so that heartbeats notice it in test time. Nothing else needs them short, and short they are
   * fragile: with 1 s, a connection with nothing else to send (a caller while every worker is dead) writes a
   * heartbeat about once a second, and RabbitMQ closes it after two silent seconds, so an event loop held up
   * for about a second (the test process's GC, or CPU taken by respawning workers on a 2-core machine) cut
   * the poison test's caller and failed its unconfirmed calls -32007. @default 5
   */
  readonly heartbeatSeconds?: number;
  /** The retry policy of `work.run` on every worker, in-process and spawned. @default none */
  readonly retry?: RetryPolicy;
}

/** Connection options every rig participant uses: fast reconnects (and the heartbeat the test asks for), so faults are noticed and healed in test time. */
function connectionOptions(url: string, name: string, heartbeatSeconds: number): ConnectionOptions {
  return { urls: url, heartbeatSeconds, socketTimeoutMs: 1000, connectionName: name, reconnect: { initialDelayMs: 50, maxDelayMs: 500 } };
}

/** A retry policy as the spawned worker reads it (scripts/soak-worker.ts, retryFromEnv). */
function retryEnv(retry: RetryPolicy | undefined): Record<string, string> {
  if (retry === undefined) return {};
  const env: Record<string, string> = { WORK_RETRY_ATTEMPTS: String(retry.attempts), WORK_RETRY_BACKOFF_MS: String(retry.backoffMs) };
  if (retry.maxBackoffMs !== undefined) env['WORK_RETRY_MAX_BACKOFF_MS'] = String(retry.maxBackoffMs);
  return env;
}

export class FaultRig {
  readonly ns = new TestNamespace();
  /** Redis key prefix of this rig: trackers' records and the run counts. */
  readonly prefix = this.ns.namespace;
  /** Straight to Redis, for counting runs and reading what the workers wrote. */
  readonly redis = new Redis(redisUrl(), { maxRetriesPerRequest: 1 });
  readonly workers: WarrenService[] = [];
  readonly workerConnections: AmqpConnection[] = [];
  readonly trackers: StoreCallTracker[] = [];
  readonly sinks: WarrenService[] = [];
  /** Notification ids each sink service received (at least once). */
  readonly received = new Map<string, Set<string>>(sinkServices.map((s) => [s, new Set<string>()]));
  client!: RpcClient;
  clientConnection!: AmqpConnection;

  private constructor(
    private readonly td: Teardown,
    readonly clientProxy: FaultProxy,
    readonly workerProxy: FaultProxy,
    readonly redisProxy: FaultProxy,
    private readonly o: Required<Omit<RigOptions, 'retry'>> & Pick<RigOptions, 'retry'>,
  ) {}

  static async start(td: Teardown, options: RigOptions = {}): Promise<FaultRig> {
    const o = { workers: 2, prefetch: 64, leaseMs: 2000, heartbeatSeconds: 5, ...options };
    const [clientProxy, workerProxy, redisProxy] = await Promise.all([FaultProxy.forUrl(amqpUrl()), FaultProxy.forUrl(amqpUrl()), FaultProxy.forUrl(redisUrl())]);
    const rig = new FaultRig(td, clientProxy, workerProxy, redisProxy, o);
    td.add(() => rig.ns.destroy());
    td.add(() => deleteRedisKeys(`${rig.prefix}:`));
    td.add(() => rig.redis.disconnect());
    for (const p of [clientProxy, workerProxy, redisProxy]) td.add(() => p.close());
    rig.ns.service(workService);
    for (const s of sinkServices) rig.ns.service(s);
    for (let i = 0; i < o.workers; i++) await rig.addWorker(`w${i}`);
    for (const s of sinkServices) await rig.addSink(s);
    rig.clientConnection = await rig.connect(clientProxy, 'client');
    rig.client = await RpcClient.create(rig.clientConnection, { namespace: rig.ns.namespace, defaultTimeoutMs: 10_000 });
    td.add(() => rig.client.close());
    return rig;
  }

  /** The RabbitMQ connection name (client_properties.connection_name) of a rig participant. */
  connectionName(role: string): string {
    return `${this.ns.namespace}-${role}`;
  }

  /** Starts one more tracked worker instance of `fault.work`. */
  async addWorker(instanceId: string): Promise<WarrenService> {
    const tracker = createRedisTracker({ redis: this.redisProxy.url(redisUrl()), keyPrefix: this.prefix, leaseMs: this.o.leaseMs, heartbeatMs: Math.floor(this.o.leaseMs / 4), commandTimeoutMs: 500 });
    const connection = await this.connect(this.workerProxy, `worker-${instanceId}`);
    const service = await WarrenService.start(connection, { namespace: this.ns.namespace, name: workService, instanceId, prefetch: this.o.prefetch, shutdownGraceMs: 2000, methods: workMethods(this.redis, this.prefix, undefined, this.o.retry === undefined ? {} : { retry: this.o.retry }), tracker });
    this.td.add(() => service.close());
    this.workers.push(service);
    this.workerConnections.push(connection);
    this.trackers.push(tracker);
    return service;
  }

  /**
   * Starts a worker in a child process of its own (scripts/soak-worker.ts), straight to RabbitMQ
   * and Redis, for tests that SIGKILL workers. SIGKILLed at teardown if still running.
   */
  async spawnWorker(instanceId: string, env: Record<string, string> = {}): Promise<TsChild> {
    const child = spawnTs(path.join(__dirname, '..', '..', '..', 'scripts', 'soak-worker.ts'), [], {
      WORK_AMQP_URL: amqpUrl(),
      WORK_REDIS_URL: redisUrl(),
      WORK_NAMESPACE: this.ns.namespace,
      WORK_PREFIX: this.prefix,
      WORK_INSTANCE: instanceId,
      WORK_PREFETCH: String(this.o.prefetch),
      WORK_LEASE_MS: String(this.o.leaseMs),
      ...retryEnv(this.o.retry),
      ...env,
    });
    this.td.add(() => child.kill('SIGKILL'));
    // Worker starts have taken up to 30 s on a loaded CI machine (tsx compiles the worker first).
    await child.waitForLine(/^ready$/, 60_000);
    return child;
  }

  private async addSink(name: string): Promise<void> {
    const seen = this.received.get(name) ?? new Set<string>();
    const connection = await this.connect(this.workerProxy, `sink-${name}`);
    const sink = await WarrenService.start(connection, {
      namespace: this.ns.namespace,
      name,
      notifications: { [noteMethod]: { handler: (p: unknown) => void seen.add(String((p as string[])[0])) } },
    });
    this.td.add(() => sink.close());
    this.sinks.push(sink);
  }

  private async connect(proxy: FaultProxy, role: string): Promise<AmqpConnection> {
    const connection = new AmqpConnection(connectionOptions(proxy.url(amqpUrl()), this.connectionName(role), this.o.heartbeatSeconds));
    await connection.start();
    this.td.add(() => connection.close());
    return connection;
  }

  /** Runs of each call id, by the instance that ran them, in order. */
  async runs(callIds: readonly string[]): Promise<string[][]> {
    const pipeline = this.redis.pipeline();
    for (const id of callIds) pipeline.lrange(runsKey(this.prefix, id), 0, -1);
    const replies = (await pipeline.exec()) ?? [];
    return replies.map(([err, value]) => {
      if (err) throw err;
      return value as string[];
    });
  }
}
