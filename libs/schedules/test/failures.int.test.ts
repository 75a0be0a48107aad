// A scheduled run that fails is seen (docs/scheduling.md, "When a run fails"), against the real
// RabbitMQ and Redis: each failing occurrence and each failing run-now is one `warn` line naming
// the schedule, the method, the call id and the error's code and message, and is counted in the
// scheduler's stats (`failed` by method: warren_schedule_failed_total{schedule,method} on /metrics).
import { Writable } from 'node:stream';
import { createLogger } from '@warren/logger';
import { waitFor } from '@warren/testkit';
import { ScheduleControl, parseSchedule, type Schedule } from '../src';
import { ScheduleBed } from './support';

const bed = new ScheduleBed();
beforeAll(() => bed.start());
afterAll(() => bed.close());
beforeEach(() => bed.fresh());

/** A logger whose lines the test reads back, parsed. */
function capture(): { logger: ReturnType<typeof createLogger>; lines: () => Record<string, unknown>[] } {
  const text: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, done) {
      text.push(chunk.toString('utf8'));
      done();
    },
  });
  return { logger: createLogger({ name: 'test', destination }), lines: () => text.join('').split('\n').filter((l) => l.length > 0).map((l) => JSON.parse(l) as Record<string, unknown>) };
}

async function add(name: string, method: string, everyMs = 1000, paused = false): Promise<Schedule> {
  const parsed = parseSchedule({ name, method, everyMs, paused }, Date.now(), 'runtime');
  if (!parsed.ok) throw new Error(parsed.reason);
  await bed.store().put(parsed.schedule, false);
  return parsed.schedule;
}

const failedLines = (lines: Record<string, unknown>[], schedule: string): Record<string, unknown>[] => lines.filter((l) => l['msg'] === 'scheduled run failed' && l['schedule'] === schedule);

it('logs and counts each failing occurrence with the schedule, method, call id and error; a succeeding schedule logs and counts none', async () => {
  const { logger, lines } = capture();
  await add('failing', 'refuse');
  await add('fine', 'tick');
  const scheduler = bed.scheduler({ logger });
  scheduler.start();
  await waitFor(() => failedLines(lines(), 'failing').length >= 1 && bed.ticks('undefined').ends.length >= 1, { timeoutMs: 15_000, message: 'a failed run of `failing` and a run of `fine`' });
  await scheduler.close();
  const line = failedLines(lines(), 'failing')[0] ?? {};
  expect(line).toMatchObject({ level: 40, component: 'scheduler', schedule: 'failing', method: 'refuse', code: -32602, error: 'refused on purpose' });
  expect(line['callId']).toEqual(expect.any(String));
  expect(line['occurrence']).toEqual(expect.stringMatching(/^\d{4}-\d\d-\d\dT/));
  const stats = scheduler.stats();
  expect(stats.get('failing')?.failed['refuse']).toBe(failedLines(lines(), 'failing').length);
  expect(stats.get('fine')?.failed).toEqual({ tick: 0 });
  expect(failedLines(lines(), 'fine')).toEqual([]);
  // The record keeps the code (schedule.list shows it), not the message.
  const state = (await bed.store().states(['failing'])).get('failing');
  expect(state?.lastRun).toMatchObject({ outcome: 'error', errorCode: -32602 });
  expect(state?.lastRun).not.toHaveProperty('errorMessage');
});

it('logs and counts a failing run-now (an unserved method: -32601), marked manual', async () => {
  const { logger, lines } = capture();
  const s = await add('by-hand', 'nobody.serves', 60_000, true);
  const scheduler = bed.scheduler({ logger });
  const control = new ScheduleControl(bed.store(), () => bed.client, (schedule, fired) => scheduler.firedNow(schedule, fired));
  const ran = await control.runNow(s.name);
  expect(ran.ok).toBe(true);
  await waitFor(() => failedLines(lines(), 'by-hand').length === 1, { timeoutMs: 10_000, message: 'the run-now failed' });
  expect(failedLines(lines(), 'by-hand')[0]).toMatchObject({ schedule: 'by-hand', method: 'nobody.serves', code: -32601, manual: true, callId: ran.ok ? ran.value.callId : '' });
  expect(scheduler.stats().get('by-hand')).toMatchObject({ fired: 1, failed: { 'nobody.serves': 1 } });
});
