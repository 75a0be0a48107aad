import { Redis } from 'ioredis';
import { connectClient, startService, type CallOptions, type RpcClient, type ServiceMethod, type WarrenService } from '@warren/amqp';
import type { Params } from '@warren/jsonrpc';
import { Teardown, amqpUrl, redisUrl, uniqueName } from '@warren/testkit';
import { TestNamespace } from '../../../test/support/amqp';
import type { StoreCallTracker } from '../src/call-tracker';
import type { TrackerOptions } from '../src/options';
import { createRedisTracker } from '../src/redis-tracker';
import { InflightView } from '../src/view';
import { workMethods } from './fixtures/methods';

/** A key prefix of its own for one test file, and a way to delete every key under it. */
export class TestPrefix {
  readonly prefix = uniqueName('inflight');
  readonly redis = new Redis(redisUrl(), { lazyConnect: false, maxRetriesPerRequest: 1 });

  /** Every key under the prefix. */
  async keys(): Promise<string[]> {
    const found: string[] = [];
    let cursor = '0';
    do {
      const [next, batch] = await this.redis.scan(cursor, 'MATCH', `${this.prefix}*`, 'COUNT', 1000);
      cursor = next;
      found.push(...batch);
    } while (cursor !== '0');
    return found;
  }

  /** Keys under the prefix that have no TTL (there must be none). */
  async keysWithoutTtl(): Promise<string[]> {
    const all = await this.keys();
    const ttls = await Promise.all(all.map((k) => this.redis.pttl(k)));
    return all.filter((_k, i) => ttls[i] === -1);
  }

  async destroy(): Promise<void> {
    const all = await this.keys();
    if (all.length > 0) await this.redis.del(...all);
    this.redis.disconnect();
  }
}

/**
 * Starts a call and says its call id. The JSON-RPC id is given explicitly:
 * without one, `call` takes a number from the client's counter for the body's
 * id as well, and `nextCallId()` would be one off.
 */
export function startCall<R>(client: RpcClient, method: string, params?: Params, opts: Omit<CallOptions, 'id'> = {}): { callId: string; answer: Promise<R> } {
  const callId = client.nextCallId();
  const answer = client.call<R>(method, params, { ...opts, id: callId });
  // Tests await `answer` later; this keeps an early rejection from counting as unhandled meanwhile.
  answer.catch(() => undefined);
  return { callId, answer };
}

/**
 * What the integration tests here start from: a namespace and a key prefix
 * of their own, a client and a view on the real Redis, and tracked service
 * instances on demand. `close()` takes all of it down, keys and queues too.
 */
export class TestBed {
  readonly td = new Teardown();
  readonly ns = new TestNamespace();
  readonly tp = new TestPrefix();

  async start(): Promise<{ client: RpcClient; view: InflightView }> {
    this.td.add(() => this.ns.destroy());
    this.td.add(() => this.tp.destroy());
    const view = new InflightView({ redis: redisUrl(), keyPrefix: this.tp.prefix });
    this.td.add(() => view.close());
    const client = await connectClient({ urls: amqpUrl(), namespace: this.ns.namespace, defaultTimeoutMs: 20_000 });
    this.td.add(() => client.close());
    return { client, view };
  }

  /** A service instance tracked under this bed's prefix, serving `work` unless `methods` says otherwise; closed by `close()`. */
  async trackedService(
    name: string,
    opts: { readonly prefetch: number; readonly instanceId?: string; readonly methods?: Record<string, ServiceMethod>; readonly tracker?: TrackerOptions },
  ): Promise<{ service: WarrenService; tracker: StoreCallTracker }> {
    const tracker = createRedisTracker({ redis: redisUrl(), keyPrefix: this.tp.prefix, leaseMs: 3000, heartbeatMs: 500, ...opts.tracker });
    const service = await startService({
      urls: amqpUrl(),
      namespace: this.ns.namespace,
      name: this.ns.service(name),
      prefetch: opts.prefetch,
      methods: opts.methods ?? workMethods(this.tp.redis, this.tp.prefix),
      tracker,
      ...(opts.instanceId === undefined ? {} : { instanceId: opts.instanceId }),
    });
    this.td.add(() => service.close());
    return { service, tracker };
  }

  close(): Promise<void> {
    return this.td.run();
  }
}
