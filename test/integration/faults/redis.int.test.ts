// Redis goes away under a few hundred calls in flight, through a fault proxy
// in front of it (the real server is left alone): cut and refused, then
// stalled (commands time out). Tracking is an aid, not a gate: every call
// still runs once and succeeds, the trackers say they are degraded, and
// tracking resumes, with new calls tracked again, once Redis answers.
import { InflightView } from '@warren/inflight';
import { Teardown, redisUrl, waitFor } from '@warren/testkit';
import { activeTimers, expectNewCallsSucceed, expectNotesDelivered, expectQuiet, repeatedRuns } from './checks';
import { Load, lateOrUnexpected, tally } from './load';
import { FaultRig } from './rig';

const td = new Teardown();
afterAll(() => td.run());

async function degradedThenBack(rig: FaultRig, load: Load, fault: () => void, heal: () => void): Promise<void> {
  await load.settledAtLeast(300);
  fault();
  await waitFor(() => rig.trackers.every((t) => t.state === 'degraded'), { timeoutMs: 10_000, message: 'trackers degraded' });
  const settledAtFault = load.settled;
  await load.settledAtLeast(settledAtFault + 300);
  heal();
  await waitFor(() => rig.trackers.every((t) => t.state === 'tracking'), { timeoutMs: 15_000, message: 'tracking resumed' });
  await load.finished;
}

async function afterOutage(rig: FaultRig, load: Load, timers: number): Promise<void> {
  expect({ tally: tally(load.calls), wrong: lateOrUnexpected(load.calls, ['ok'], 1500).slice(0, 5) }).toEqual({ tally: { ok: load.calls.length }, wrong: [] });
  expect(await repeatedRuns(rig, load.calls)).toEqual([]);
  expect(rig.trackers.map((t) => t.health().degradedTransitions)).toEqual(rig.trackers.map(() => 1));
  expect(rig.trackers.reduce((n, t) => n + t.health().untracked, 0)).toBeGreaterThan(0);
  await expectNotesDelivered(rig, load.notes);
  await expectNewCallsSucceed(rig);
  // Tracked again: a new call leaves its outcome in Redis.
  const view = new InflightView({ redis: redisUrl(), keyPrefix: rig.prefix });
  td.add(() => view.close());
  const callId = rig.client.nextCallId();
  await expect(rig.client.call('work.run', { ms: 1, n: 21 }, { id: callId })).resolves.toBe(42);
  await expect(view.status(callId)).resolves.toMatchObject({ state: 'done', response: { result: 42 } });
  await expectQuiet(rig, timers);
}

it('Redis cut and refused mid-load: calls run untracked, once each, and tracking resumes', async () => {
  const rig = await FaultRig.start(td);
  const timers = activeTimers();
  const load = new Load(rig.client, { total: 1500, inflight: 300 });
  await degradedThenBack(rig, load, () => (rig.redisProxy.refuse(true), rig.redisProxy.cutAll()), () => rig.redisProxy.refuse(false));
  await afterOutage(rig, load, timers);
}, 60_000);

it('Redis stalled mid-load (commands time out, no reset): calls run untracked, once each, and tracking resumes', async () => {
  const rig = await FaultRig.start(td);
  const timers = activeTimers();
  const load = new Load(rig.client, { total: 1500, inflight: 300 });
  await degradedThenBack(rig, load, () => rig.redisProxy.stall(), () => rig.redisProxy.resume());
  await afterOutage(rig, load, timers);
}, 60_000);
