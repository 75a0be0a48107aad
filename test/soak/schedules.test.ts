// Two scheduler processes racing over 5 minutes of a 1-second schedule (docs/scheduling.md,
// "Exactly one firing"): every occurrence fires exactly once, counted by the handler, across
// SIGKILLs of whichever holds the lease (each replaced by a fresh process, so two race again).
// About 5.5 minutes: the late tier's (npm run test:soak), never `npm test`.
import { Redis } from 'ioredis';
import { startService } from '@warren/amqp';
import { Teardown, amqpUrl, redisUrl, spawnTs, uniqueName, waitFor, type TsChild } from '@warren/testkit';
import { parseSchedule, RedisScheduleStore } from '@warren/schedules';
import { deleteRedisKeys } from '../integration/helpers';
import { TestNamespace } from '../support/amqp';

const td = new Teardown();
afterAll(() => td.run());

const runMs = 5 * 60_000;

it('two schedulers, 5 minutes of a 1-second schedule, the leader killed twice: every occurrence handled exactly once', async () => {
  const ns = new TestNamespace();
  td.add(() => ns.destroy());
  const prefix = uniqueName('soak-sched');
  td.add(() => deleteRedisKeys(`{${prefix}:sched}`));
  // The handler counts each occurrence it is called for (the schedule's last run names it as the call runs).
  const calls: number[] = [];
  const service = await startService({ urls: amqpUrl(), namespace: ns.namespace, name: ns.service('soak-ticker'), methods: { tick: { handler: () => (calls.push(Date.now()), 'ok') } } });
  td.add(() => service.close());
  const store = new RedisScheduleStore({ url: redisUrl(), keyPrefix: prefix });
  td.add(() => store.close());
  const parsed = parseSchedule({ name: 'every-second', method: 'tick', everyMs: 1000, overlap: 'allow' }, Date.now(), 'runtime');
  if (!parsed.ok) throw new Error(parsed.reason);
  await store.put(parsed.schedule, false);

  const env = { AMQP_URL: amqpUrl(), REDIS_URL: redisUrl(), WARREN_NAMESPACE: ns.namespace, WARREN_KEY_PREFIX: prefix };
  const leaders = new Set<TsChild>();
  const start = async (): Promise<TsChild> => {
    const child = spawnTs(require.resolve('./scheduler-child.ts'), [], env);
    td.add(async () => void (await child.kill('SIGKILL')));
    await child.waitForLine(/scheduler started/, 30_000);
    return child;
  };
  const children = [await start(), await start()];
  const leader = async (): Promise<TsChild> => {
    let found: TsChild | undefined;
    const leads = (c: TsChild): boolean => c.stdout.filter((l) => l.startsWith('leader ')).at(-1) === 'leader true';
    await waitFor(() => (found = children.find(leads)) !== undefined, { timeoutMs: 20_000, message: 'a leader' });
    return found as TsChild;
  };

  const t0 = Date.now();
  for (const at of [runMs / 3, (2 * runMs) / 3]) {
    await new Promise((r) => setTimeout(r, t0 + at - Date.now()));
    const victim = await leader();
    leaders.add(victim);
    await victim.kill('SIGKILL');
    children.splice(children.indexOf(victim), 1);
    children.push(await start());
  }
  await new Promise((r) => setTimeout(r, t0 + runMs - Date.now()));
  for (const c of children) await c.kill('SIGTERM');
  const fired = async (): Promise<number> => [...(await occurrenceRecords(prefix)).values()].filter((v) => v === 'fired').length;
  await waitFor(async () => calls.length >= (await fired()), { timeoutMs: 20_000, message: 'every fired call handled' });

  const records = await occurrenceRecords(prefix);
  const times = [...records.keys()];
  // Every occurrence from the first to the last is recorded fired: none skipped, missed or left claimed.
  expect([...records.values()].filter((v) => v !== 'fired')).toEqual([]);
  for (let i = 1; i < times.length; i++) expect((times[i] as number) - (times[i - 1] as number)).toBe(1000);
  expect(times.length).toBeGreaterThanOrEqual(runMs / 1000 - 10);
  // ... and the handler ran exactly once for each.
  expect(calls).toHaveLength(times.length);
  expect(leaders.size).toBe(2);
}, 7 * 60_000);

/** Each occurrence's record, oldest first (epoch ms → fired | skipped | missed | claimed:<token>). */
async function occurrenceRecords(prefix: string): Promise<Map<number, string>> {
  const redis = new Redis(redisUrl(), { maxRetriesPerRequest: 1 });
  try {
    const found = new Map<number, string>();
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `{${prefix}:sched}:occ:every-second:*`, 'COUNT', 1000);
      cursor = next;
      for (const k of keys) found.set(Number(k.slice(k.lastIndexOf(':') + 1)), (await redis.get(k)) ?? '');
    } while (cursor !== '0');
    return new Map([...found].sort((a, b) => a[0] - b[0]));
  } finally {
    redis.disconnect();
  }
}
