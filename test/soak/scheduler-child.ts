// One scheduler process for test/soak/schedules.test.ts (and an example of running the scheduler
// as a process of its own): a client on AMQP_URL and WARREN_NAMESPACE, a Redis store under
// WARREN_KEY_PREFIX, a 2-second lease. Prints `leader true|false` whenever that changes.
import { connectClient } from '@warren/amqp';
import { RedisScheduleStore, Scheduler } from '@warren/schedules';

async function main(): Promise<void> {
  const client = await connectClient({ urls: process.env['AMQP_URL'] ?? '', namespace: process.env['WARREN_NAMESPACE'] ?? '' });
  const store = new RedisScheduleStore({ url: process.env['REDIS_URL'] ?? '', keyPrefix: process.env['WARREN_KEY_PREFIX'] ?? '' });
  const scheduler = new Scheduler({ store, client, leaseMs: 2000, tickMs: 200 });
  scheduler.start();
  let leader: boolean | undefined;
  const watch = setInterval(() => {
    if (scheduler.leader !== leader) console.log(`leader ${String((leader = scheduler.leader))}`);
  }, 50);
  console.log('scheduler started');
  process.on('SIGTERM', () => {
    clearInterval(watch);
    void scheduler.close().then(() => Promise.all([client.close(), store.close()])).then(() => process.exit(0));
  });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
