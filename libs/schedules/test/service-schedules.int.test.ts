// Schedules defined in code, end to end on the real RabbitMQ and Redis (docs/scheduling.md,
// "Schedules in code"): a service announces one; a registry and the sync store it with the service
// as source; the scheduler fires it (counted in the service's handler); paused, it stays paused
// when the service announces again; a newer instance with a changed definition replaces it, still
// paused, and resumed it fires the new params.
import { ServiceRegistry, startService, type ScheduleDeclaration } from '@warren/amqp';
import { AmqpConnection } from '@warren/amqp-transport';
import { amqpUrl, waitFor } from '@warren/testkit';
import { ScheduleControl, ServiceScheduleSync } from '../src';
import { ScheduleBed } from './support';

const bed = new ScheduleBed();
beforeAll(() => bed.start());
afterAll(() => bed.close());

it('announced, stored with its source, fired; pause survives re-announcement; a change replaces it', async () => {
  const connection = new AmqpConnection({ urls: amqpUrl() });
  await connection.start();
  bed.td.add(() => connection.close());
  const registry = await ServiceRegistry.start(connection, { namespace: bed.ns.namespace });
  bed.td.add(() => registry.close());
  const store = bed.store();
  // A short resync, so every announcement is written again (the pause must survive that).
  const sync = new ServiceScheduleSync(store, registry, undefined, 300);
  sync.start();
  bed.td.add(() => sync.close());
  const control = new ScheduleControl(store, () => bed.client);

  const service = bed.ns.service('planner');
  const calls = new Map<number, number>();
  const instance = (schedule: ScheduleDeclaration) =>
    startService({
      urls: amqpUrl(),
      namespace: bed.ns.namespace,
      name: service,
      announceIntervalMs: 300,
      schedules: [schedule],
      methods: {
        plan_tick: {
          handler: (p) => {
            const v = (p as { v: number }).v;
            calls.set(v, (calls.get(v) ?? 0) + 1);
            return 'ok';
          },
        },
      },
    });
  const name = `${service}.tick`;
  const first = await instance({ name, method: 'plan_tick', params: { v: 1 }, everyMs: 1000 });
  bed.td.add(() => first.close());

  await waitFor(async () => (await store.get(name)) !== undefined, { timeoutMs: 10_000, message: 'stored from the announcement' });
  const listed = (await control.list()).find((s) => s.name === name);
  expect(listed).toMatchObject({ source: `service:${service}`, method: 'plan_tick', params: { v: 1 }, timing: { kind: 'interval', everyMs: 1000 }, paused: false });

  const scheduler = bed.scheduler();
  scheduler.start();
  await waitFor(() => (calls.get(1) ?? 0) >= 2, { timeoutMs: 15_000, message: 'fired twice' });

  expect((await control.setPaused(name, true)).ok).toBe(true);
  // Several announcements and resyncs later, still paused and unchanged.
  let changes = 0;
  const counted = (): void => void changes++;
  registry.on('change', counted);
  await waitFor(() => changes >= 4, { timeoutMs: 10_000, message: 'announced again' });
  registry.off('change', counted);
  await sync.idle();
  expect(await store.get(name)).toMatchObject({ paused: true, params: { v: 1 }, source: `service:${service}` });

  // A newer instance (a deploy) changes the definition: replaced, still paused.
  const second = await instance({ name, method: 'plan_tick', params: { v: 2 }, everyMs: 2000, overlap: 'allow' });
  bed.td.add(() => second.close());
  await waitFor(async () => (await store.get(name))?.params !== undefined && JSON.stringify((await store.get(name))?.params) === '{"v":2}', { timeoutMs: 10_000, message: 'replaced' });
  expect(await store.get(name)).toMatchObject({ paused: true, overlap: 'allow', timing: { kind: 'interval', everyMs: 2000 }, source: `service:${service}` });
  expect(calls.get(2) ?? 0).toBe(0);

  expect((await control.setPaused(name, false)).ok).toBe(true);
  await waitFor(() => (calls.get(2) ?? 0) >= 1, { timeoutMs: 15_000, message: 'the new definition fires' });
  await scheduler.close();
});
