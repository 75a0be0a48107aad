// `warren namespace rm` against the real RabbitMQ and Redis: a namespace's queues, exchanges and keys
// go (found from names.ts and announcements, or through the management API), another namespace's
// stay; it asks first, and refuses while a service still consumes.
import amqp from 'amqplib';
import { Redis } from 'ioredis';
import { startService, type WarrenService } from '@warren/amqp';
import { Teardown, amqpUrl, redisUrl } from '@warren/testkit';
import { TestNamespace } from '../../../test/support/amqp';
import { deleteRedisKeys, runCli } from '../../../test/integration/helpers';

const td = new Teardown();
const redis = new Redis(redisUrl());
afterAll(async () => {
  await td.run();
  redis.disconnect();
});

/** A namespace with a service declared (then stopped unless `keep`) and keys of every store. */
async function trial(keep = false): Promise<{ ns: TestNamespace; service: WarrenService | undefined; keys: string[] }> {
  const ns = new TestNamespace();
  td.add(() => ns.destroy());
  td.add(() => deleteRedisKeys(`${ns.namespace}:`));
  td.add(() => deleteRedisKeys(`{${ns.namespace}:`));
  const service = await startService({ urls: amqpUrl(), namespace: ns.namespace, name: ns.service('calc'), methods: { add: { handler: () => 1 } } });
  if (keep) td.add(() => service.close());
  else await service.close();
  const keys = [`${ns.namespace}:rec:{c1}`, `${ns.namespace}:{${ns.namespace}:workers}`, `{${ns.namespace}:sched}:defs`, `${ns.namespace}:eventlog:audit`, `${ns.namespace}:method:add`];
  for (const key of keys) await redis.set(key, key.endsWith(':method:add') ? JSON.stringify({ v: 1, service: 'calc', jobStyle: false, at: Date.now() }) : 'x', 'EX', 600);
  return { ns, service: keep ? service : undefined, keys };
}

async function exists(kind: 'queue' | 'exchange', name: string): Promise<boolean> {
  const model = await amqp.connect(amqpUrl());
  try {
    const ch = await model.createChannel();
    ch.on('error', () => undefined);
    try {
      await (kind === 'queue' ? ch.checkQueue(name) : ch.checkExchange(name));
      return true;
    } catch {
      return false;
    }
  } finally {
    await model.close().catch(() => undefined);
  }
}

async function present(t: { ns: TestNamespace; keys: string[] }): Promise<boolean[]> {
  const n = t.ns.names;
  return [
    await exists('queue', n.serviceQueue('calc')),
    await exists('queue', n.deadLetterQueue('calc')),
    await exists('exchange', n.requestExchange),
    await exists('exchange', n.controlExchange),
    ...(await Promise.all(t.keys.map(async (k) => (await redis.exists(k)) === 1))),
  ];
}

const env = (extra: Record<string, string> = {}): Record<string, string> => ({ AMQP_URL: amqpUrl(), REDIS_URL: redisUrl(), WARREN_GATEWAY: 'off', ...extra });
const allTrue = (list: boolean[]): boolean => list.every(Boolean);
const allFalse = (list: boolean[]): boolean => list.every((x) => !x);

it("removes a namespace's queues, exchanges and Redis keys with --yes, and leaves another namespace's alone", async () => {
  const [gone, kept] = [await trial(), await trial()];
  expect(allTrue(await present(gone))).toBe(true);
  const r = await runCli(['--json', 'namespace', 'rm', gone.ns.namespace, '--yes'], { env: env() });
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  const [listed, outcome] = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
  expect(listed).toMatchObject({ namespace: gone.ns.namespace, source: 'derived', exchanges: expect.arrayContaining([gone.ns.names.requestExchange]) as unknown, redisKeys: [...gone.keys].sort() });
  expect(outcome).toMatchObject({ removed: true, redisKeys: gone.keys.length });
  expect(await present(gone)).toEqual(gone.keys.map(() => false).concat([false, false, false, false]));
  expect(allTrue(await present(kept))).toBe(true);
}, 60_000);

it('asks for the name first (anything else keeps everything), and refuses while a service consumes unless --force', async () => {
  const t = await trial(true);
  const refused = await runCli(['namespace', 'rm', t.ns.namespace], { env: env(), input: 'yes\n' });
  expect(refused.code).toBe(1);
  expect(refused.stderr).toMatch(/CLI_IN_USE: namespace "[^"]+" is in use: .*\.svc\.calc has 1 consumer/);
  await t.service?.close();
  const declined = await runCli(['namespace', 'rm', t.ns.namespace], { env: env(), input: 'yes\n' });
  expect(declined.code).toBe(1);
  expect(declined.stderr).toMatch(/Type the namespace's name .* to remove all of the above/);
  expect(declined.stderr).toMatch(/CLI_NOT_CONFIRMED: not confirmed: nothing was removed/);
  expect(allTrue(await present(t))).toBe(true);
  const typed = await runCli(['namespace', 'rm', t.ns.namespace], { env: env(), input: `${t.ns.namespace}\n` });
  expect(typed.code).toBe(0);
  expect(typed.stdout).toMatch(/^removed \d+ queues, \d+ exchanges and 5 Redis keys of namespace /);
  expect(allFalse(await present(t))).toBe(true);
}, 60_000);
