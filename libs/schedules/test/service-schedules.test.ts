// Keeping the schedules services define in code (docs/scheduling.md, "Schedules in code") in the
// store, over the in-memory store and a registry of hand-made announcements: added with the
// service as source, a changed definition replaces the stored one and keeps its pause, a name
// the service no longer announces goes, a service gone from the registry keeps its schedules,
// and a name taken by a run-time schedule is refused, not overwritten.
import { EventEmitter } from 'node:events';
import type { InstanceInfo, ScheduleDeclaration } from '@warren/amqp';
import { MemoryScheduleStore, ScheduleControl, ServiceScheduleSync } from '../src';

class FakeRegistry extends EventEmitter<{ change: [] }> {
  instances: InstanceInfo[] = [];
  list(): InstanceInfo[] {
    return this.instances;
  }
  announce(service: string, startedAt: number, schedules: readonly ScheduleDeclaration[]): void {
    const others = this.instances.filter((i) => !(i.service === service && i.startedAt === startedAt));
    this.instances = [...others, { service, instanceId: `${service}-${startedAt}`, startedAt, schedules } as unknown as InstanceInfo];
    this.emit('change');
  }
}

const store = new MemoryScheduleStore();
const registry = new FakeRegistry();
const control = new ScheduleControl(store, () => {
  throw new Error('no run-now here');
});
const sync = new ServiceScheduleSync(store, registry);
beforeAll(() => sync.start());
afterAll(() => sync.close());

const daily: ScheduleDeclaration = { name: 'reports.daily', method: 'reports.build', params: { full: true }, cron: '0 2 * * *', timezone: 'Europe/Berlin' };

it('adds what a service announces, with the service as source', async () => {
  registry.announce('reports', 1, [daily]);
  await sync.idle();
  expect(await store.get('reports.daily')).toMatchObject({ method: 'reports.build', params: { full: true }, timing: { kind: 'cron', cron: '0 2 * * *', timezone: 'Europe/Berlin' }, source: 'service:reports', paused: false });
});

it('keeps the pause across announcements, and a changed definition replaces the stored one, still paused', async () => {
  await control.setPaused('reports.daily', true);
  registry.announce('reports', 1, [daily]);
  await sync.idle();
  expect((await store.get('reports.daily'))?.paused).toBe(true);
  registry.announce('reports', 2, [{ ...daily, cron: '0 4 * * *' }]); // a newer instance describes the service
  await sync.idle();
  expect(await store.get('reports.daily')).toMatchObject({ timing: { cron: '0 4 * * *' }, paused: true, source: 'service:reports' });
  registry.announce('reports', 1, [daily]); // the older instance, still up, does not win it back
  await sync.idle();
  expect((await store.get('reports.daily'))?.timing).toMatchObject({ cron: '0 4 * * *' });
});

it('refuses a name a run-time schedule holds, leaving it as it was', async () => {
  expect((await control.add({ name: 'cleanup', method: 'ops.clean', everyMs: 60_000 })).ok).toBe(true);
  registry.announce('janitor', 1, [{ name: 'cleanup', method: 'janitor.sweep', everyMs: 5000 }]);
  await sync.idle();
  expect(await store.get('cleanup')).toMatchObject({ method: 'ops.clean', source: 'runtime', timing: { everyMs: 60_000 } });
});

it('keeps the schedules of a service gone from the registry; removes one its newest instance stops announcing', async () => {
  registry.instances = registry.instances.filter((i) => i.service !== 'reports');
  registry.emit('change');
  await sync.idle();
  expect(await store.get('reports.daily')).toBeDefined();
  registry.announce('reports', 3, []);
  await sync.idle();
  expect(await store.get('reports.daily')).toBeUndefined();
  expect(await store.get('cleanup')).toBeDefined();
});
