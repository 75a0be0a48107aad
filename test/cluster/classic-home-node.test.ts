// Zombie workers after a classic queue's node returns (issue 28, item 1), on a three-node RabbitMQ
// cluster of extra nodes (never the machine's own). The service queue is a durable classic queue
// whose home is node B (its first worker declares it there); three workers consume it, one on each
// node's connection. B is stopped (`stop_app`), brought back, then killed (SIGKILL) and restarted.
//  - while B is down, callers (on A, with the broker's availability guard) get -32002, never -32601:
//    RabbitMQ 3.10 returns their mandatory publishes 312 NO_ROUTE as if nothing were bound, and the
//    guard knows the method's service from its announcements; so do, with nothing installed, a default
//    `connectClient`, a `ctx` call from another service and `warren call` (each asks the announcements
//    once a request comes back); a method nobody serves still gets -32601 from each;
//  - the workers whose connections survived had their consumers cancelled and say consuming: false;
//  - within 10 s of B's return every live worker consumes again (exactly 3 consumers), and the
//    throughput is back near its level before (the ratio is printed; asserted loosely).
// Measured before this fix: -32601 for every call while down, and 1 of 3 workers consuming after.
//
// Runs with the cluster stage: `npm run test:cluster -- test/cluster/classic-home-node.test.ts`.
import { setTimeout as sleep } from 'node:timers/promises';
import { RpcClient, ServiceRegistry, WarrenService, connectClient, guardAvailability, names, type InstanceInfo } from '@warren/amqp';
import { AmqpConnection } from '@warren/amqp-transport';
import { wireErrorOf } from '@warren/jsonrpc';
import { RabbitCluster, Teardown, redisUrl, uniqueName, waitFor, type RabbitNode } from '@warren/testkit';
import { runCli } from '../integration/helpers';

const td = new Teardown();
const namespace = uniqueName('chn').replace(/[^A-Za-z0-9_.-]/g, '');
const queue = names(namespace).serviceQueue('work');
let cluster: RabbitCluster;
let A: RabbitNode, B: RabbitNode, C: RabbitNode;
let workers: WarrenService[];
let caller: RpcClient;
/** A `connectClient` with its defaults: no registry, no guard. */
let plain: RpcClient;
let registry: ServiceRegistry;
let admin: AmqpConnection;
const figures: Record<string, unknown> = {};

/** A connection to the cluster trying `order` first, then the other nodes. */
async function connect(role: string, order: readonly RabbitNode[]): Promise<AmqpConnection> {
  const urls = [...order, ...cluster.nodes.filter((n) => !order.includes(n))].map((n) => n.url);
  const c = new AmqpConnection({ urls, connectionName: `${namespace}-${role}`, heartbeatSeconds: 2, socketTimeoutMs: 2000, reconnect: { initialDelayMs: 100, maxDelayMs: 1000 } });
  await c.start();
  td.add(() => c.close());
  return c;
}

beforeAll(async () => {
  if (!RabbitCluster.available()) throw new Error('the cluster stage needs root, the rabbitmq user and Debian\'s rabbitmq-server (it starts three extra nodes)');
  cluster = await RabbitCluster.start({ size: 3 });
  td.add(() => cluster.stop());
  [A, B, C] = cluster.nodes as [RabbitNode, RabbitNode, RabbitNode];
  const worker = async (id: string, order: RabbitNode[]): Promise<WarrenService> => {
    const s = await WarrenService.start(await connect(id, order), {
      namespace, name: 'work', instanceId: id, queueType: 'classic', durable: true, prefetch: 2, announceIntervalMs: 2000,
      methods: { 'work.run': { handler: async (p) => (await sleep(20), (p as number[])[0]) } },
    });
    td.add(() => s.close());
    return s;
  };
  // The first declares the queue on its node, B: B is its home. The others consume it from C and A.
  workers = [await worker('w-b', [B, C]), await worker('w-c', [C, A]), await worker('w-a', [A, C])];
  const callerConnection = await connect('caller', [A, C]);
  caller = await RpcClient.create(callerConnection, { namespace, defaultTimeoutMs: 3000 });
  td.add(() => caller.close());
  registry = await ServiceRegistry.start(callerConnection, { namespace });
  td.add(() => registry.close());
  const guard = guardAvailability(caller, callerConnection, registry, { ttlMs: 500 });
  td.add(() => guard.close());
  admin = await connect('admin', [A, C]);
  plain = await connectClient({ connection: await connect('plain', [A, C]), namespace, defaultTimeoutMs: 3000 });
  td.add(() => plain.close());
  // Calls work.run (or a method nobody serves) from its handler, through `ctx`, letting the error escape.
  const front = await WarrenService.start(await connect('front', [C, A]), {
    namespace, name: 'front', instanceId: 'f', methods: { 'front.via': { handler: (p, ctx) => ctx.client.call((p as string[])[0] ?? 'work.run', [7], { timeoutMs: 3000 }) } },
  });
  td.add(() => front.close());
  await waitFor(() => workInstances().length === 3, { timeoutMs: 20_000, message: 'three workers announced' });
}, 400_000);

afterAll(async () => {
  console.log(`classic home node figures: ${JSON.stringify(figures)}`);
  td.add(() => cluster?.heal());
  await td.run();
}, 400_000);

/** The instances of `work` the registry lists (the `front` service announces too). */
const workInstances = (): InstanceInfo[] => registry.list().filter((i) => i.service === 'work');

/** The queue's consumers, as RabbitMQ counts them (undefined while the queue cannot be reached). */
async function consumers(): Promise<number | undefined> {
  const model = admin.model;
  if (!model) return undefined;
  const ch = await model.createChannel().catch(() => undefined);
  if (!ch) return undefined;
  ch.on('error', () => undefined);
  try {
    return (await ch.checkQueue(queue)).consumerCount;
  } catch {
    return undefined;
  } finally {
    await ch.close().catch(() => undefined);
  }
}

/** The code `call` fails with ('ok' when it answers). */
const codeOf = (call: Promise<unknown>): Promise<number | string> => call.then(() => 'ok', (err: unknown) => wireErrorOf(err)?.code ?? String(err));

/** While B is down: the callers with Warren's defaults (connectClient, `ctx`, `warren call`), for a served and an unserved method. */
async function defaultCallers(withCli: boolean): Promise<Record<string, number | string>> {
  const env = { AMQP_URL: A.url, REDIS_URL: redisUrl(), WARREN_NAMESPACE: namespace, WARREN_GATEWAY: 'off' };
  const cli = async (method: string): Promise<number | string> => {
    const r = await runCli(['--json', 'call', method, '1'], { env, timeoutMs: 30_000 });
    return (JSON.parse(r.stdout) as { error?: { code: number } }).error?.code ?? 'ok';
  };
  return {
    connectClient: await codeOf(plain.call('work.run', [1])),
    connectClientUnserved: await codeOf(plain.call('no.such.method', [1])),
    ctx: await codeOf(caller.call('front.via', ['work.run'])),
    ctxUnserved: await codeOf(caller.call('front.via', ['no.such.method'])),
    ...(withCli ? { cli: await cli('work.run'), cliUnserved: await cli('no.such.method') } : {}),
  };
}

/** `loops` callers calling one after another for `ms`: answers per second, and every failure's code. */
async function load(ms: number, loops = 16): Promise<{ perSecond: number; failures: Record<string, number> }> {
  const until = Date.now() + ms;
  let ok = 0;
  const failures: Record<string, number> = {};
  await Promise.all(Array.from({ length: loops }, async (_, i) => {
    for (let n = 0; Date.now() < until; n++) {
      try {
        if ((await caller.call<number>('work.run', [i * 1_000_000 + n])) === i * 1_000_000 + n) ok++;
      } catch (err) {
        const code = String(wireErrorOf(err)?.code ?? err);
        failures[code] = (failures[code] ?? 0) + 1;
        // A refusal comes back at once: pace the loop instead of spinning.
        await sleep(20);
      }
    }
  }));
  return { perSecond: Math.round((ok * 1000) / ms), failures };
}

describe.each([
  ['stopped (stop_app)', () => cluster.stopApp(B), () => cluster.startApp(B)],
  ['killed (SIGKILL)', () => cluster.kill(B), () => cluster.restart(B)],
] as const)('classic queue, home node %s', (label, takeDown, bringBack) => {
  it('callers get -32002 (never -32601) while it is down; within 10 s of its return all 3 workers consume again and throughput recovers', async () => {
    await waitFor(async () => (await consumers()) === 3, { timeoutMs: 30_000, message: '3 consumers before' });
    await load(1000); // warm-up: the first calls of a run pay for JIT and cold caches
    const before = await load(3000);
    expect(before.failures).toEqual({});
    await takeDown();
    // The workers whose connections survived (on C and A) had their consumers cancelled, and say so.
    await waitFor(() => workers.slice(1).every((w) => !w.consuming), { timeoutMs: 10_000, message: 'surviving workers not consuming' });
    // ...in their announcements too, which the registry (the broker's /services) shows.
    // (w-b too when its connection survived: after the first case it has failed over to C and stays there.)
    const notConsuming = (): string[] => workInstances().filter((i) => !i.consuming).map((i) => i.instanceId);
    await waitFor(() => notConsuming().includes('w-a') && notConsuming().includes('w-c'), { timeoutMs: 10_000, message: 'the registry shows w-a and w-c not consuming' });
    const down = await load(4000);
    const defaults = await defaultCallers(label.startsWith('stopped'));
    expect(defaults).toEqual({
      connectClient: -32002, connectClientUnserved: -32601, ctx: -32002, ctxUnserved: -32601,
      ...(label.startsWith('stopped') ? { cli: -32002, cliUnserved: -32601 } : {}),
    });
    // Still not consuming: their re-subscribes fail (404) while B is down, and keep being retried.
    expect(workers.slice(1).map((w) => w.consuming)).toEqual([false, false]);
    expect(down.failures['-32601'] ?? 0).toBe(0);
    expect(down.failures['-32002'] ?? 0).toBeGreaterThan(0);
    await bringBack();
    const back = Date.now();
    await waitFor(async () => (await consumers()) === 3 && workers.every((w) => w.consuming), { timeoutMs: 10_000, intervalMs: 100, message: `every live worker consuming within 10 s of ${B.name}'s return` });
    const resumedMs = Date.now() - back;
    await waitFor(() => workInstances().length === 3 && notConsuming().length === 0, { timeoutMs: 10_000, message: 'the registry shows all 3 consuming again' });
    const answeredBefore = workers.map((w) => w.stats().answered);
    // The best of up to three windows: on this shared machine (2 cores, other work) one window can be starved.
    let after = await load(3000);
    for (let i = 0; i < 2 && after.perSecond < 0.8 * before.perSecond; i++) {
      const again = await load(3000);
      if (again.perSecond > after.perSecond) after = again;
    }
    const ratio = after.perSecond / before.perSecond;
    figures[label] = {
      beforePerSecond: before.perSecond, whileDown: down.failures, resumedMs, afterPerSecond: after.perSecond, afterFailures: after.failures, ratio: Number(ratio.toFixed(2)),
      answeredAfterBy: workers.map((w, i) => w.stats().answered - (answeredBefore[i] ?? 0)),
    };
    expect(await consumers()).toBe(3);
    expect(after.failures).toEqual({});
    // Loosely: this shared machine's timings are noise; the figure is printed (≥ 0.8 expected).
    expect(ratio).toBeGreaterThan(0.5);
  }, 300_000);
});
