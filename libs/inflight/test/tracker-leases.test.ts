// The tracker over a scripted store, under fake timers: the ctx.once ledger, degraded mode and its
// once-per-transition log, cancels, and batched lease renewals.
import { CancelledError, ErrorCode } from '@warren/jsonrpc';
import { encodeMeta } from '../src/record-codec';
import { StoreCallTracker } from '../src/call-tracker';
import { FakeStore } from './fake-store';
import { call, expectRun, logged, logger, ok, startTracker, stopTracker, warnings } from './tracker-harness';

let store: FakeStore;
let tracker: StoreCallTracker;

beforeEach(async () => {
  ({ store, tracker } = await startTracker());
});
afterEach(async () => {
  await stopTracker(tracker);
});

it('ctx.once ledger: a run marks and stores its effect; a later run of the call gets the result; a run after one that died inside is told', async () => {
  const c = call();
  const first = expectRun(await tracker.begin(c, new AbortController()));
  expect(await first.effects?.start('charge')).toEqual({ kind: 'run' });
  await first.effects?.complete('charge', '42');
  first.release();
  const again = expectRun(await tracker.begin({ ...c }, new AbortController()));
  expect(await again.effects?.start('charge')).toEqual({ kind: 'done', json: '42' });
  expect(await again.effects?.start('mail')).toEqual({ kind: 'run' });
  const third = expectRun(await tracker.begin({ ...c }, new AbortController()));
  expect(await third.effects?.start('mail')).toEqual({ kind: 'interrupted' });
});

it('degrades when Redis fails: calls run untracked, one warning per transition, and resumes on the next good heartbeat', async () => {
  const announced: string[] = [];
  tracker.onReportChange(() => announced.push(tracker.report().state));
  store.down = true;
  const a = call();
  const d = expectRun(await tracker.begin(a, new AbortController()));
  expect(d.attempt).toBe(a.attempt);
  await tracker.begin(call(), new AbortController());
  await tracker.begin(call(), new AbortController());
  expect(tracker.state).toBe('degraded');
  expect(store.claims).toHaveLength(0);
  await jest.advanceTimersByTimeAsync(3000); // heartbeats keep failing: no new warning
  expect(warnings()).toEqual([
    'in-flight tracking DEGRADED: Redis stopped answering; until it answers, calls run untracked: at-least-once (a redelivered call runs again), no stored outcomes (status and inflight cannot see them, a redelivery is not answered from the store), no ctx.once dedup (effects may repeat)',
  ]);

  store.down = false;
  await jest.advanceTimersByTimeAsync(1000);
  expect(tracker.state).toBe('tracking');
  expect(logged().filter((l) => l.msg.startsWith('in-flight tracking resumed'))).toHaveLength(1);
  expect(tracker.health()).toMatchObject({ degradedTransitions: 1, untracked: 3 });
  // Told once per change of state, for the service to announce it.
  expect(announced).toEqual(['degraded', 'tracking']);
  expect(tracker.report()).toEqual({ state: 'tracking', since: expect.any(Number), degradedTransitions: 1, untracked: 3 });

  // A call that started untracked still leaves its outcome, with what it was.
  await tracker.finish(a, ok(1));
  expect(store.finishes[0]?.args.unclaimed).toEqual({ worker: 'me', meta: encodeMeta({ service: 'svc', method: 'work', deadline: a.deadline, rid: String(a.id) }) });
});

it('a Redis that cannot be reached at start is one warning that says what degraded means', async () => {
  await tracker.stop();
  store = new FakeStore();
  store.down = true;
  tracker = new StoreCallTracker({ logger: logger() }, store);
  await tracker.start({ service: 'svc', instanceId: 'me', running: () => 0 });
  await tracker.begin(call(), new AbortController());
  await jest.advanceTimersByTimeAsync(3000);
  expect(tracker.state).toBe('degraded');
  expect(warnings()).toEqual([expect.stringMatching(/^in-flight tracking DEGRADED: Redis cannot be reached at start; until it answers, calls run untracked: at-least-once .*no stored outcomes.*no ctx\.once dedup/)]);
});

it('with requireTracking, answers ServiceUnavailable while degraded', async () => {
  await tracker.stop();
  store = new FakeStore();
  store.down = true;
  tracker = new StoreCallTracker({ requireTracking: true, logger: logger() }, store);
  await tracker.start({ service: 'svc', instanceId: 'me', running: () => 0 });
  const c = call();
  const d = await tracker.begin(c, new AbortController());
  expect(d.action).toBe('answer');
  expect(JSON.parse((d as { text: string }).text)).toMatchObject({ id: c.id, error: { code: ErrorCode.ServiceUnavailable, data: { reason: 'tracking_unavailable' } } });
  expect(warnings()).toEqual(['in-flight tracking DEGRADED: Redis cannot be reached at start; until it answers, every call fails with -32002 (data.reason tracking_unavailable), as requireTracking asks']);
});

it('treats a script Redis refused as a bug, not an outage', async () => {
  store.claimReplies.push(Object.assign(new Error('ERR user_script:1: something'), { name: 'ReplyError' }));
  expectRun(await tracker.begin(call(), new AbortController()));
  expect(tracker.state).toBe('tracking');
  expect(logged().some((l) => l.level === 50)).toBe(true);
});

it('aborts the handler of a call cancelled elsewhere, even when the cancel overtakes the claim', async () => {
  const a = call();
  const ca = new AbortController();
  expectRun(await tracker.begin(a, ca));
  store.onCancel?.(a.callId);
  expect(ca.signal.reason).toBeInstanceOf(CancelledError);

  const b = call();
  store.onCancel?.(b.callId); // before b's claim is registered
  const cb = new AbortController();
  expectRun(await tracker.begin(b, cb));
  expect(cb.signal.aborted).toBe(true);
  expect(tracker.health().cancelled).toBe(2);
});

it('renews, in one tick, the leases of the calls that have run a third of a lease, and learns of cancels and takeovers from it', async () => {
  const calls = [call(), call(), call()];
  const controllers = calls.map(() => new AbortController());
  for (const [i, c] of calls.entries()) expectRun(await tracker.begin(c, controllers[i] ?? new AbortController()));
  await jest.advanceTimersByTimeAsync(999);
  expect(store.renewals).toEqual([]); // younger than leaseMs / 3
  await jest.advanceTimersByTimeAsync(1);
  expect(store.renewals.sort()).toEqual(calls.map((c) => c.callId).sort());
  expect(store.beats.at(-1)).toMatchObject({ service: 'svc', instanceId: 'me', calls: calls.map((c) => c.callId) });

  store.renewReply = 1;
  await jest.advanceTimersByTimeAsync(1000);
  expect(controllers.every((c) => c.signal.aborted)).toBe(true);
});

it('counts a lease lost to a takeover', async () => {
  store.renewReply = -1;
  expectRun(await tracker.begin(call(), new AbortController()));
  await jest.advanceTimersByTimeAsync(1000);
  expect(tracker.health().leasesLost).toBe(1);
  await jest.advanceTimersByTimeAsync(2000);
  expect(tracker.health().leasesLost).toBe(1); // not renewed again
});

it('refuses a second service instance', async () => {
  await expect(tracker.start({ service: 'other', instanceId: 'x', running: () => 0 })).rejects.toThrow(/one tracker per service instance/);
});
