// schedule.add's check of what a schedule would call (docs/scheduling.md "Schedules"): through
// ScheduleControl on the memory store, with a lookup standing in for the broker's catalogue.
import { MemoryScheduleStore, ScheduleControl, type ServedMethods } from '../src';

const served: ServedMethods = (m) => ({ add: { params: { type: 'array', items: { type: 'number' }, minItems: 2, maxItems: 2 } }, ping: {} })[m];
const control = (): ScheduleControl => new ScheduleControl(new MemoryScheduleStore(), () => {
  throw new Error('no client needed');
}, undefined, served);

it('refuses a method nobody serves unless allowUnserved (its params then unchecked)', async () => {
  const c = control();
  await expect(c.add({ name: 'a', method: 'ad', everyMs: 1000 })).resolves.toEqual({ ok: false, refusal: { reason: 'method_not_served', method: 'ad' } });
  await expect(c.add({ name: 'a', method: 'ad', params: ['x'], everyMs: 1000 }, { allowUnserved: true })).resolves.toMatchObject({ ok: true, value: { method: 'ad' } });
});

it('refuses params the method\'s schema refuses, with ajv\'s details; accepts fitting ones and any for a method without a schema', async () => {
  const c = control();
  const refused = await c.add({ name: 'b', method: 'add', params: [1, 'two'], everyMs: 1000 }, { allowUnserved: true });
  expect(refused).toEqual({ ok: false, refusal: { reason: 'params_rejected', method: 'add', details: [{ path: '/1', keyword: 'type', message: 'must be number' }] } });
  await expect(c.add({ name: 'b', method: 'add', params: [1, 2], everyMs: 1000 })).resolves.toMatchObject({ ok: true });
  await expect(c.add({ name: 'c', method: 'ping', params: { any: 'thing' }, everyMs: 1000 })).resolves.toMatchObject({ ok: true });
});

it('checks nothing without a lookup (a control outside the broker)', async () => {
  const c = new ScheduleControl(new MemoryScheduleStore(), () => {
    throw new Error('no client needed');
  });
  await expect(c.add({ name: 'd', method: 'anything', everyMs: 1000 })).resolves.toMatchObject({ ok: true });
});
