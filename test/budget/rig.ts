/**
 * What the budget test measures: a caller (an RpcClient in the test's process), two `add` services
 * (one tracking its calls in Redis, one not; each a process of its own: service-child.ts) and the
 * broker's HTTP gateway as users run it (broker/src/main.ts in a process of its own), each
 * process talking to RabbitMQ and Redis through counting proxies of its own (@warren/testkit
 * CountingProxy), so its figures are its alone whatever else shares the machine's servers.
 */
import { join } from 'node:path';
import { connectClient, type RpcClient } from '@warren/amqp';
import { CountingProxy, amqpUrl, freePort, redisUrl, spawnTs, type Counts, type Teardown, type TsChild } from '@warren/testkit';
import { TestNamespace } from '../support/amqp';

/** One process's proxies: its figures are theirs, each prefixed with the proxy's name (`amqp sent basic.publish`). */
export class Meters {
  /** `pid`: the process, when it is a child of the test's (its system calls can then be counted apart). */
  constructor(private readonly proxies: Readonly<Record<string, CountingProxy>>, readonly pid?: number) {}

  snapshot(): Counts {
    const all: Counts = {};
    for (const [prefix, proxy] of Object.entries(this.proxies)) {
      for (const [name, value] of Object.entries(proxy.snapshot())) all[`${prefix} ${name}`] = value;
    }
    return all;
  }

  /** The shortest quiet time of its proxies, ms. */
  idleMs(): number {
    return Math.min(...Object.values(this.proxies).map((p) => p.idleMs()));
  }
}

export type Tracking = 'untracked' | 'tracked';

/** A path a call takes: `call()` makes one and checks its result; `caller` is the process that sent it to RabbitMQ. */
export interface CallPath {
  readonly call: () => Promise<void>;
  readonly caller: Meters;
  readonly service: Meters;
}

export interface Rig {
  readonly client: (tracking: Tracking) => CallPath;
  readonly gateway: (tracking: Tracking) => CallPath;
  /** Every process's meters, to wait for quiet. */
  readonly all: readonly Meters[];
}

const METHOD: Record<Tracking, string> = { untracked: 'budget.add', tracked: 'budget.addTracked' };

async function proxies(td: Teardown, withRedis: boolean): Promise<Record<string, CountingProxy>> {
  const amqp = await CountingProxy.forUrl(amqpUrl(), 'amqp');
  td.add(() => amqp.close());
  if (!withRedis) return { amqp };
  const redis = await CountingProxy.forUrl(redisUrl(), 'resp');
  td.add(() => redis.close());
  return { amqp, redis };
}

/** Stops a child: SIGTERM (it drains), SIGKILL if it has not exited after `graceMs`. */
async function stopChild(child: TsChild, graceMs: number): Promise<void> {
  const killer = setTimeout(() => void child.kill('SIGKILL'), graceMs);
  await child.kill('SIGTERM');
  clearTimeout(killer);
}

/** An `add` service in a process of its own (service-child.ts), through proxies of its own. */
async function service(ns: TestNamespace, td: Teardown, tracking: Tracking): Promise<Meters> {
  const own = await proxies(td, tracking === 'tracked');
  const env: Record<string, string> = { AMQP_URL: own['amqp']!.url(amqpUrl()) };
  if (own['redis'] !== undefined) env['REDIS_URL'] = own['redis'].url(redisUrl());
  const child = spawnTs(join(__dirname, 'service-child.ts'), [ns.namespace, ns.service(`budget-${tracking}`), METHOD[tracking], tracking], env);
  td.add(() => stopChild(child, 10_000));
  await child.waitForLine(/^ready$/, 60_000);
  return new Meters(own, child.child.pid);
}

/** The broker as `warren-broker` runs it (in-flight view, queued marks, directory), on the test's namespace and proxies. */
async function broker(ns: TestNamespace, td: Teardown, token: string): Promise<{ url: string; meters: Meters }> {
  const own = await proxies(td, true);
  const port = await freePort();
  const child = spawnTs(join(__dirname, '..', '..', 'broker', 'src', 'main.ts'), [], {
    AMQP_URL: own['amqp']!.url(amqpUrl()),
    REDIS_URL: own['redis']!.url(redisUrl()),
    WARREN_NAMESPACE: ns.namespace,
    WARREN_KEY_PREFIX: ns.namespace,
    GATEWAY_HOST: '127.0.0.1',
    GATEWAY_PORT: String(port),
    GATEWAY_TOKENS: token,
    SCHEDULER: 'off',
    LOG_LEVEL: 'info',
  });
  ns.service('warren-broker');
  td.add(() => stopChild(child, 20_000));
  await child.waitForLine(/broker ready/, 60_000);
  // The HTTP side counted too (bytes only), in front of the gateway's port.
  const http = await CountingProxy.start({ target: { host: '127.0.0.1', port }, protocol: 'bytes' });
  td.add(() => http.close());
  return { url: `http://127.0.0.1:${http.port}`, meters: new Meters({ ...own, http }, child.child.pid) };
}

let seq = 0;
function checked(result: unknown, a: number): void {
  if (result !== a + 1) throw new Error(`wrong result ${JSON.stringify(result)} for ${a}+1`);
}

/** Starts everything in `ns`; `td` undoes it all. */
export async function startRig(ns: TestNamespace, td: Teardown): Promise<Rig> {
  const [untracked, tracked] = await Promise.all([service(ns, td, 'untracked'), service(ns, td, 'tracked')]);
  const services: Record<Tracking, Meters> = { untracked, tracked };
  const callerProxies = await proxies(td, false);
  const client: RpcClient = await connectClient({ urls: callerProxies['amqp']!.url(amqpUrl()), namespace: ns.namespace, defaultTimeoutMs: 10_000 });
  td.add(() => client.close());
  const callerMeters = new Meters(callerProxies);
  const token = `budget-${process.pid}-${Date.now()}`;
  const gw = await broker(ns, td, token);
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${token}` };
  return {
    all: [callerMeters, gw.meters, services.untracked, services.tracked],
    client: (tracking) => ({
      caller: callerMeters,
      service: services[tracking],
      call: async () => {
        const a = seq++;
        checked(await client.call<number>(METHOD[tracking], [a, 1]), a);
      },
    }),
    gateway: (tracking) => ({
      caller: gw.meters,
      service: services[tracking],
      call: async () => {
        const a = seq++;
        const response = await fetch(`${gw.url}/rpc`, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: a, method: METHOD[tracking], params: [a, 1] }) });
        checked(((await response.json()) as { result?: unknown }).result, a);
      },
    }),
  };
}
