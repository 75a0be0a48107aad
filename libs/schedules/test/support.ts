import { Redis } from 'ioredis';
import { connectClient, startService, type RpcClient, type WarrenService } from '@warren/amqp';
import { InvalidParamsError } from '@warren/jsonrpc';
import { Teardown, amqpUrl, redisUrl, uniqueName } from '@warren/testkit';
import { TestNamespace } from '../../../test/support/amqp';
import { deleteRedisKeys } from '../../../test/integration/helpers';
import { RedisScheduleStore, Scheduler, scheduleKeys, type SchedulerOptions } from '../src';

/** What the `tick` handler saw for one tag: each call's start and end, and the most running at once. */
export class Ticks {
  readonly starts: number[] = [];
  readonly ends: number[] = [];
  running = 0;
  maxRunning = 0;
}

/**
 * A namespace and a key prefix of their own, a service whose `tick` counts its calls (and holds
 * each for `params.ms`), a client, and schedulers on a Redis store on demand; `close()` takes
 * everything down, keys and queues too.
 */
export class ScheduleBed {
  readonly td = new Teardown();
  readonly ns = new TestNamespace();
  /** A key prefix per test (`fresh()`), so no schedule of one test fires in the next. */
  prefix = uniqueName('sched');
  keys = scheduleKeys(this.prefix);
  private readonly prefixes = [this.prefix];
  readonly redis = new Redis(redisUrl(), { maxRetriesPerRequest: 1 });
  /** The `tick` handler's calls, by the `tag` param of each schedule. */
  private readonly byTag = new Map<string, Ticks>();
  client!: RpcClient;
  service!: WarrenService;

  async start(): Promise<void> {
    this.td.add(() => this.ns.destroy());
    this.td.add(async () => {
      for (const prefix of this.prefixes) await deleteRedisKeys(`{${prefix}:sched}`);
      this.redis.disconnect();
    });
    this.service = await startService({
      urls: amqpUrl(),
      namespace: this.ns.namespace,
      name: this.ns.service('ticker'),
      prefetch: 50,
      methods: {
        tick: {
          handler: async (p) => {
            const ticks = this.ticks(String((p as { tag?: unknown } | undefined)?.tag));
            ticks.starts.push(Date.now());
            ticks.maxRunning = Math.max(ticks.maxRunning, ++ticks.running);
            const ms = (p as { ms?: number } | undefined)?.ms ?? 0;
            if (ms > 0) await new Promise((r) => setTimeout(r, ms));
            ticks.running--;
            ticks.ends.push(Date.now());
            return 'ok';
          },
        },
        // Refuses every call: a schedule of it fails each run (failures.int.test.ts).
        refuse: { handler: () => { throw new InvalidParamsError('refused on purpose'); } },
      },
    });
    this.td.add(() => this.service.close());
    this.client = await connectClient({ urls: amqpUrl(), namespace: this.ns.namespace });
    this.td.add(() => this.client.close());
  }

  ticks(tag: string): Ticks {
    let t = this.byTag.get(tag);
    if (t === undefined) this.byTag.set(tag, (t = new Ticks()));
    return t;
  }

  /** A key prefix of its own for the next test. */
  fresh(): void {
    this.prefix = uniqueName('sched');
    this.keys = scheduleKeys(this.prefix);
    this.prefixes.push(this.prefix);
  }

  store(): RedisScheduleStore {
    const store = new RedisScheduleStore({ url: redisUrl(), keyPrefix: this.prefix });
    this.td.add(() => store.close());
    return store;
  }

  scheduler(options: Partial<SchedulerOptions> = {}): Scheduler {
    const s = new Scheduler({ store: this.store(), client: this.client, leaseMs: 2000, tickMs: 200, ...options });
    this.td.add(() => s.close());
    return s;
  }

  /** Each occurrence's record under its key: epoch ms → fired | skipped | queued | claimed:<token>. */
  async occurrences(name: string): Promise<Map<number, string>> {
    const pattern = `${this.keys.occurrence(name, 0).slice(0, -1)}*`;
    const found = new Map<number, string>();
    let cursor = '0';
    do {
      const [next, batch] = await this.redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      cursor = next;
      for (const k of batch) found.set(Number(k.slice(k.lastIndexOf(':') + 1)), (await this.redis.get(k)) ?? '');
    } while (cursor !== '0');
    return new Map([...found].sort((a, b) => a[0] - b[0]));
  }

  close(): Promise<void> {
    return this.td.run();
  }
}
