// The tracker's decisions over a scripted store, under fake timers: what it answers for each claim
// outcome, waiting for a live owner, takeovers (alone in the suspect lane), and retry waits.
import { SuspectLane } from '../../amqp/src/runtime/suspect-lane';
import { CancelledError, ErrorCode, encodeResponse } from '@warren/jsonrpc';
import { StoreCallTracker } from '../src/call-tracker';
import { FakeStore } from './fake-store';
import { call, expectRun, logger, ok, startTracker, stopTracker } from './tracker-harness';

let store: FakeStore;
let tracker: StoreCallTracker;

beforeEach(async () => {
  ({ store, tracker } = await startTracker());
});
afterEach(async () => {
  await stopTracker(tracker);
});

it('claims, runs, and stores the outcome under the claim; release after finish writes nothing', async () => {
  const c = call();
  const d = expectRun(await tracker.begin(c, new AbortController()));
  expect(d.attempt).toBe(1);
  await tracker.finish(c, ok(1));
  d.release();
  expect(store.finishes).toHaveLength(1);
  expect(store.finishes[0]?.args).toMatchObject({ state: 'done', code: '', result: JSON.stringify(ok(1)) });
  expect(store.finishes[0]?.args.unclaimed).toBeUndefined();
  expect(store.releases).toEqual([]);
  expect(tracker.health()).toMatchObject({ state: 'tracking', tracked: 1, untracked: 0 });
});

it('gives an unfinished call back on release (requeued on shutdown)', async () => {
  const c = call();
  expectRun(await tracker.begin(c, new AbortController())).release();
  expect(store.releases).toEqual([c.callId]);
});

it('answers a finished call from the store with its stored text as it is', async () => {
  const c = call();
  // Spacing no encoder would write: a parse and re-encode would change it.
  const stored = `{ "jsonrpc": "2.0", "result": 42, "id": ${c.id} }`;
  store.claimReplies.push({ kind: 'stored', result: stored, code: undefined, state: 'done', rid: String(c.id) });
  expect(await tracker.begin(c, new AbortController())).toEqual({ action: 'answer', text: stored });
  expect(tracker.health().answeredFromStore).toBe(1);
});

it('answers a stored outcome made for another request id (a reused call id) under this request id', async () => {
  store.claimReplies.push({ kind: 'stored', result: JSON.stringify({ jsonrpc: '2.0', result: 42, id: 'old' }), code: undefined, state: 'done', rid: '"old"' });
  const c = call();
  expect(await tracker.begin(c, new AbortController())).toEqual({ action: 'answer', text: encodeResponse({ jsonrpc: '2.0', result: 42, id: c.id }) });
});

it('answers Cancelled for a call cancelled before it started, and dead-letters one out of attempts', async () => {
  store.claimReplies.push({ kind: 'cancelled' }, { kind: 'dead', attempts: 3, lastOwner: 'w9' });
  const a = call();
  expect(await tracker.begin(a, new AbortController())).toEqual({ action: 'answer', text: encodeResponse({ jsonrpc: '2.0', error: new CancelledError().toErrorObject(), id: a.id }) });
  const b = call();
  const dead = await tracker.begin(b, new AbortController());
  expect(dead).toMatchObject({ action: 'dead-letter', attempts: 3 });
  expect(JSON.parse((dead as { text: string }).text)).toMatchObject({ id: b.id, error: { code: ErrorCode.WorkerLost, data: { attempts: 3 } } });
  expect(tracker.health().deadLettered).toBe(1);
});

it('waits while another live worker runs the call, then answers with its result', async () => {
  store.claimReplies.push({ kind: 'busy', owner: 'other', leaseLeftMs: 2000 }, { kind: 'busy', owner: 'other', leaseLeftMs: 1900 }, { kind: 'stored', result: JSON.stringify(ok(1)), code: undefined, state: 'done', rid: '1' });
  const c = call({ id: 1 });
  const decision = tracker.begin(c, new AbortController());
  await jest.advanceTimersByTimeAsync(250);
  expect(await decision).toEqual({ action: 'answer', text: JSON.stringify(ok(1)) });
  expect(store.claims).toHaveLength(3);
  // One delivery waited, however many times it looked.
  expect(tracker.health().waited).toBe(1);
});

it('takes the call over when the owner stops renewing, with a claim made alone', async () => {
  store.claimReplies.push({ kind: 'busy', owner: 'dead', leaseLeftMs: 50 }, { kind: 'expired', lastOwner: 'dead', attempts: 1 }, { kind: 'run', attempt: 2, previousOwner: 'dead' });
  const decision = tracker.begin(call(), new AbortController());
  await jest.advanceTimersByTimeAsync(100);
  expect(expectRun(await decision).attempt).toBe(2);
  expect(store.claims.map((c) => c.args.takeover)).toEqual([false, false, true]);
  expect(tracker.health()).toMatchObject({ takeovers: 1, isolated: 1, waited: 1 });
});

it('sends a lost worker\'s call to wait when its method has a retry policy: a retry decision, listed as retrying, its lane place given back', async () => {
  const lane = new SuspectLane();
  await tracker.stop();
  store = new FakeStore();
  tracker = new StoreCallTracker({ leaseMs: 3000, heartbeatMs: 1000, waitPollMs: 100, logger: logger() }, store);
  await tracker.start({ service: 'svc', instanceId: 'me', running: () => 0, isolation: lane });
  store.claimReplies.push({ kind: 'retry', attempt: 2, delayMs: 500, nextTryAt: 12_345, lastOwner: 'dead' });
  const lost = call({ maxAttempts: 3, retryDelaysMs: [500, 1000] });
  const decision = await tracker.begin(lost, new AbortController());
  expect(decision).toEqual({ action: 'retry', nextAttempt: 2, delayMs: 500, nextTryAt: 12_345 });
  // The claim told the script the waits and the deadline; nothing runs here, so the lane is free at once.
  expect(store.claims[0]?.args.retry).toEqual({ deadline: lost.deadline, delaysMs: [500, 1000] });
  expect(store.listed).toEqual([{ callId: lost.callId, deadline: lost.deadline }]);
  expect(lane.enter(new AbortController())).toBe(true);
  lane.leave();
  expect(tracker.health()).toMatchObject({ delayedAfterLoss: 1, takeovers: 0 });
  // Through the one hook: nothing runs, nothing is replied, the runtime sends it to the delay queue.
  store.claimReplies.push({ kind: 'retry', attempt: 2, delayMs: 500, nextTryAt: 12_345, lastOwner: 'dead' });
  const execute = jest.fn();
  await expect(tracker.run(call({ maxAttempts: 3, retryDelaysMs: [500, 1000] }), new AbortController(), execute)).resolves.toEqual({ reply: undefined, settle: { action: 'retry', delayMs: 500, nextAttempt: 2 }, source: 'store' });
  expect(execute).not.toHaveBeenCalled();
});

it('claims without a retry schedule for a method with no policy (taken over at once, as before)', async () => {
  expectRun(await tracker.begin(call(), new AbortController()));
  expect(store.claims[0]?.args.retry).toBeUndefined();
});

it('lists a call that failed retryably as retrying once the store marked it', async () => {
  const c = call({ maxAttempts: 3 });
  expectRun(await tracker.begin(c, new AbortController()));
  await tracker.retrying(c, Date.now() + 1000);
  expect(store.listed).toEqual([{ callId: c.callId, deadline: c.deadline }]);
});

it('claims every call as attempt 1 when it has no record, whatever RabbitMQ says of its deliveries', async () => {
  expectRun(await tracker.begin(call({ attempt: 2 }), new AbortController()));
  expect(store.claims[0]?.args.attempt).toBe(1);
});

describe('with the service\'s suspect lane', () => {
  let lane: SuspectLane;
  beforeEach(async () => {
    await tracker.stop();
    store = new FakeStore();
    lane = new SuspectLane();
    tracker = new StoreCallTracker({ leaseMs: 3000, heartbeatMs: 1000, waitPollMs: 100, logger: logger() }, store);
    await tracker.start({ service: 'svc', instanceId: 'me', running: () => 0, isolation: lane });
  });

  it('runs a suspect alone: after the calls running here, and before any new call is even claimed', async () => {
    const running = expectRun(await tracker.begin(call(), new AbortController()));
    store.claimReplies.push({ kind: 'expired', lastOwner: 'dead', attempts: 1 }, { kind: 'run', attempt: 2, previousOwner: 'dead' });
    const suspect = call({ attempt: 2 });
    const suspectDecision = tracker.begin(suspect, new AbortController());
    await jest.advanceTimersByTimeAsync(0);
    const fresh = call();
    const freshDecision = tracker.begin(fresh, new AbortController());
    await jest.advanceTimersByTimeAsync(0);
    // The suspect waits for the running call; the new call is held back unclaimed.
    expect(store.claims.map((c) => [c.callId, c.args.takeover])).toEqual([[expect.any(String), false], [suspect.callId, false]]);
    running.release();
    const alone = expectRun(await suspectDecision);
    expect(alone.attempt).toBe(2);
    expect(store.claims.at(-1)).toMatchObject({ callId: suspect.callId, args: { takeover: true } });
    await jest.advanceTimersByTimeAsync(0);
    expect(store.claims.some((c) => c.callId === fresh.callId)).toBe(false);
    alone.release();
    expectRun(await freshDecision);
    expect(store.claims.at(-1)?.callId).toBe(fresh.callId);
    expect(tracker.health()).toMatchObject({ isolated: 1, takeovers: 1 });
  });

  it('a call held back and aborted meanwhile is never claimed and stores nothing', async () => {
    store.claimReplies.push({ kind: 'expired', lastOwner: 'dead', attempts: 1 }, { kind: 'run', attempt: 2, previousOwner: 'dead' });
    const alone = expectRun(await tracker.begin(call({ attempt: 2 }), new AbortController()));
    const held = call();
    const controller = new AbortController();
    const decision = tracker.begin(held, controller);
    controller.abort(new Error('deadline'));
    const d = expectRun(await decision);
    await tracker.finish(held, ok(1));
    d.release();
    alone.release();
    expect(store.claims.some((c) => c.callId === held.callId)).toBe(false);
    expect(store.finishes).toEqual([]);
  });
});

it('stops waiting when the call is aborted (deadline, shutdown), without claiming or storing anything', async () => {
  store.claimReplies.push({ kind: 'busy', owner: 'other', leaseLeftMs: 2000 });
  const c = call();
  const controller = new AbortController();
  const decision = tracker.begin(c, controller);
  controller.abort(new Error('deadline'));
  const d = expectRun(await decision);
  await tracker.finish(c, ok(1));
  d.release();
  expect(store.finishes).toEqual([]);
  expect(store.releases).toEqual([]);
});
