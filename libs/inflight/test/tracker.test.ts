// The tracker's decisions over a scripted store, under fake timers: what it
// answers for each claim outcome, waiting for a live owner, degraded mode and
// its once-per-transition log, cancels, and batched lease renewals.
import { SuspectLane } from '@warren/amqp';
import type { Executed, RunningCall } from '@warren/calls';
import { CancelledError, ErrorCode, encodeResponse, type ResponseMessage } from '@warren/jsonrpc';
import { createLogger } from '@warren/logger';
import { encodeMeta } from '../src/record-codec';
import { FakeStore } from './fake-store';
import { StoreCallTracker, type Decision } from '../src/call-tracker';

let lines: { level: number; msg: string }[] = [];
const logger = () => createLogger({ level: 'debug', destination: { write: (s: string) => void lines.push(JSON.parse(s) as { level: number; msg: string }) } });
const warnings = (): string[] => lines.filter((l) => l.level >= 40).map((l) => l.msg);

let seq = 0;
const call = (over: Partial<RunningCall> = {}): RunningCall => ({
  callId: `c${++seq}`, id: seq, method: 'work', service: 'svc', worker: 'me', attempt: 1, deadline: Date.now() + 10_000, startedAt: Date.now(), ...over,
});
const ok = (id: number): ResponseMessage => ({ jsonrpc: '2.0', result: 'ok', id });

let store: FakeStore;
let tracker: StoreCallTracker;
const running = 0;

beforeEach(async () => {
  jest.useFakeTimers();
  lines = [];
  store = new FakeStore();
  tracker = new StoreCallTracker({ leaseMs: 3000, heartbeatMs: 1000, waitPollMs: 100, logger: logger() }, store);
  await tracker.start({ service: 'svc', instanceId: 'me', running: () => running });
});
afterEach(async () => {
  await tracker.stop();
  jest.useRealTimers();
});

function expectRun(d: Decision): Extract<Decision, { action: 'run' }> {
  if (d.action !== 'run') throw new Error(`expected run, got ${d.action}`);
  return d;
}

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
  expect(warnings()).toEqual(['in-flight tracking degraded: Redis unavailable until it answers again']);

  store.down = false;
  await jest.advanceTimersByTimeAsync(1000);
  expect(tracker.state).toBe('tracking');
  expect(lines.filter((l) => l.msg.startsWith('in-flight tracking resumed'))).toHaveLength(1);
  expect(tracker.health()).toMatchObject({ degradedTransitions: 1, untracked: 3 });
  // Told once per change of state, for the service to announce it.
  expect(announced).toEqual(['degraded', 'tracking']);
  expect(tracker.report()).toEqual({ state: 'tracking', since: expect.any(Number), degradedTransitions: 1, untracked: 3 });

  // A call that started untracked still leaves its outcome, with what it was.
  await tracker.finish(a, ok(1));
  expect(store.finishes[0]?.args.unclaimed).toEqual({ worker: 'me', meta: encodeMeta({ service: 'svc', method: 'work', deadline: a.deadline, rid: String(a.id) }) });
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
});

it('treats a script Redis refused as a bug, not an outage', async () => {
  store.claimReplies.push(Object.assign(new Error('ERR user_script:1: something'), { name: 'ReplyError' }));
  expectRun(await tracker.begin(call(), new AbortController()));
  expect(tracker.state).toBe('tracking');
  expect(lines.some((l) => l.level === 50)).toBe(true);
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

describe('run, the one hook', () => {
  const answer = (c: RunningCall): Executed => ({ kind: 'answer', text: encodeResponse(ok(Number(c.id))), response: ok(Number(c.id)) });

  it('gives the reply before the outcome is stored, and says when it is (then the claim is released)', async () => {
    const c = call();
    let finishDone: (() => void) | undefined;
    const finish = store.finish.bind(store);
    store.finish = (callId, args) => new Promise<number>((resolve) => {
      finishDone = () => void finish(callId, args).then(resolve);
    });
    const out = await tracker.run(c, new AbortController(), async (run) => {
      expect(run.attempt).toBe(1);
      return answer(c);
    });
    expect(out).toMatchObject({ reply: encodeResponse(ok(Number(c.id))), settle: { action: 'ack' }, source: 'run' });
    let stored = false;
    void out.stored?.then(() => (stored = true));
    await jest.advanceTimersByTimeAsync(0);
    expect(stored).toBe(false);
    expect(tracker.health().tracked).toBe(1);
    finishDone?.();
    await jest.advanceTimersByTimeAsync(0);
    expect(stored).toBe(true);
    expect(store.finishes[0]?.args).toMatchObject({ state: 'done', result: encodeResponse(ok(Number(c.id))) });
    // Finished: the release drops nothing in Redis.
    expect(store.releases).toEqual([]);
  });

  it('replies a stored answer without running the handler, and acks it', async () => {
    const c = call();
    const stored = `{"jsonrpc":"2.0","result":7,"id":${c.id}}`;
    store.claimReplies.push({ kind: 'stored', result: stored, code: undefined, state: 'done', rid: String(c.id) });
    const execute = jest.fn<Promise<Executed>, []>();
    expect(await tracker.run(c, new AbortController(), execute)).toEqual({ reply: stored, settle: { action: 'ack' }, source: 'store' });
    expect(execute).not.toHaveBeenCalled();
  });

  it('dead-letters a call every attempt of which lost its worker, with the reason', async () => {
    store.claimReplies.push({ kind: 'dead', attempts: 3, lastOwner: 'w9' });
    const out = await tracker.run(call(), new AbortController(), () => Promise.reject(new Error('must not run')));
    expect(out.settle).toEqual({ action: 'dead-letter', reason: 'worker_lost', code: ErrorCode.WorkerLost, attempts: 3 });
    expect(out.source).toBe('store');
  });

  it('marks a retried call retrying before the retry is settled', async () => {
    const retrying = jest.spyOn(store, 'retrying');
    const out = await tracker.run(call(), new AbortController(), async () => ({ kind: 'retry', delayMs: 500, nextAttempt: 2, nextTryAt: 1234 }));
    expect(out.settle).toEqual({ action: 'retry', delayMs: 500, nextAttempt: 2 });
    await out.stored;
    expect(retrying).toHaveBeenCalledWith(expect.any(String), expect.any(String), 1234);
    expect(store.releases).toEqual([]);
  });

  it('gives back a call shut down mid-run, and releases the claim when the handler throws', async () => {
    const a = call();
    const out = await tracker.run(a, new AbortController(), async () => ({ kind: 'requeue' }));
    expect(out).toEqual({ reply: undefined, settle: { action: 'requeue' }, source: 'run' });
    expect(store.releases).toEqual([a.callId]);
    const b = call();
    await expect(tracker.run(b, new AbortController(), () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(store.releases).toEqual([a.callId, b.callId]);
  });
});

describe('a first delivery starts while its claim is on the way', () => {
  const answer = (c: RunningCall): Executed => ({ kind: 'answer', text: encodeResponse(ok(Number(c.id))), response: ok(Number(c.id)) });
  const first = (over: Partial<RunningCall> = {}): RunningCall => call({ firstDelivery: true, ...over });
  const executing = (c: RunningCall) => async (): Promise<Executed> => {
    store.events.push(`execute ${c.callId}`);
    return answer(c);
  };
  /** Runs `c` with its claim held back: the handler must not start until the claim is answered. */
  async function expectWaitsForClaim(c: RunningCall): Promise<void> {
    store.holdClaims = true;
    const run = tracker.run(c, new AbortController(), executing(c));
    await jest.advanceTimersByTimeAsync(0);
    expect(store.events).toEqual([`claim ${c.callId}`]);
    store.held.shift()?.();
    await run;
    expect(store.events).toEqual([`claim ${c.callId}`, `execute ${c.callId}`]);
    expect(store.claims[0]?.args.running).toBe(false);
  }

  it('writes the claim, then runs the handler without waiting for the claim\'s reply; the ack still waits for the outcome', async () => {
    store.holdClaims = true;
    const c = first();
    const out = await tracker.run(c, new AbortController(), executing(c));
    expect(store.events).toEqual([`claim ${c.callId}`, `execute ${c.callId}`]);
    expect(store.claims[0]?.args).toMatchObject({ running: true, takeover: false, attempt: 1 });
    expect(out).toMatchObject({ reply: encodeResponse(ok(Number(c.id))), settle: { action: 'ack' }, source: 'run' });
    expect(store.finishes[0]?.args).toMatchObject({ state: 'done' });
    await out.stored;
    expect(tracker.health().tracked).toBe(0); // not confirmed yet
    store.held.shift()?.();
    await jest.advanceTimersByTimeAsync(0);
    expect(tracker.health().tracked).toBe(1);
  });

  it('a redelivery, a retry, or a tracker set to awaitClaim "always" waits for the claim\'s reply', async () => {
    await expectWaitsForClaim(call({ attempt: 2 }));
    await tracker.stop();
    store = new FakeStore();
    tracker = new StoreCallTracker({ leaseMs: 3000, heartbeatMs: 1000, awaitClaim: 'always', logger: logger() }, store);
    await tracker.start({ service: 'svc', instanceId: 'me', running: () => running });
    await expectWaitsForClaim(first());
  });

  it('aborts the handler when the claim finds a cancel mark this worker had not heard of', async () => {
    store.holdClaims = true;
    store.claimReplies.push({ kind: 'cancelled' });
    const c = first();
    const controller = new AbortController();
    let release: (() => void) | undefined;
    const out = tracker.run(c, controller, async () => {
      await new Promise<void>((resolve) => (release = resolve));
      return controller.signal.aborted ? { kind: 'answer', text: 'cancelled', response: { jsonrpc: '2.0', error: new CancelledError().toErrorObject(), id: c.id } } : answer(c);
    });
    await jest.advanceTimersByTimeAsync(0);
    expect(release).toBeDefined();
    store.held.shift()?.();
    await jest.advanceTimersByTimeAsync(0);
    expect(controller.signal.aborted).toBe(true);
    expect(tracker.health().cancelled).toBe(1);
    release?.();
    await (await out).stored;
    expect(store.finishes[0]?.args).toMatchObject({ state: 'cancelled' });
  });

  it('waits for the claim of a call whose cancel mark it heard, and answers Cancelled without running it', async () => {
    const c = first();
    store.onCancel?.(c.callId, 60_000);
    store.claimReplies.push({ kind: 'cancelled' });
    const execute = jest.fn<Promise<Executed>, []>();
    const out = await tracker.run(c, new AbortController(), execute);
    expect(out.reply).toBe(encodeResponse({ jsonrpc: '2.0', error: new CancelledError().toErrorObject(), id: c.id }));
    expect(execute).not.toHaveBeenCalled();
    expect(store.claims[0]?.args.running).toBe(false);
    // The mark has served: it is not kept for its TTL (a later delivery of that id claims while running again).
    await tracker.run(c, new AbortController(), async () => answer(c));
    expect(store.claims[1]?.args.running).toBe(true);
  });

  it('waits for its claims while the cancel subscription is down (a mark made meanwhile would be missed)', async () => {
    store.listening = false;
    await expectWaitsForClaim(first());
  });

  it('keeps a heard mark as long as the mark lives, well past a lease (the housekeeping tick keeps it)', async () => {
    const c = first();
    store.onCancel?.(c.callId, 60_000);
    await jest.advanceTimersByTimeAsync(30_000); // ten leases, thirty ticks
    await expectWaitsForClaim(c);
    // Once it has expired it is forgotten by the tick.
    const d = first();
    store.onCancel?.(d.callId, 5_000);
    await jest.advanceTimersByTimeAsync(6_000);
    store.events.length = 0;
    store.claims.length = 0;
    store.holdClaims = true;
    await tracker.run(d, new AbortController(), executing(d));
    expect(store.events).toEqual([`claim ${d.callId}`, `execute ${d.callId}`]);
    store.held.shift()?.();
  });

  it('waits for every claim while a mark it had no room for lives, then runs first deliveries at once again', async () => {
    expect(store.maxMarks).toBe(10_001); // the subscription reads back one more than fit, to see an overflow
    for (let i = 0; i < 10_000; i++) store.onCancel?.(`kept${i}`, 120_000);
    store.onCancel?.('dropped', 30_000);
    // Any first delivery may be the dropped mark's call: each one waits for its claim while that mark lives.
    await expectWaitsForClaim(first());
    await jest.advanceTimersByTimeAsync(31_000);
    store.events.length = 0;
    store.claims.length = 0;
    store.holdClaims = true;
    const c = first();
    await tracker.run(c, new AbortController(), executing(c));
    expect(store.events).toEqual([`claim ${c.callId}`, `execute ${c.callId}`]);
    store.held.shift()?.();
    // A cancel that is not a mark (the wire cancel overtaking a claim's reply) is dropped without that wait.
    store.onCancel?.('overtaking');
    store.events.length = 0;
    const e = first();
    await tracker.run(e, new AbortController(), executing(e));
    expect(store.events).toEqual([`claim ${e.callId}`, `execute ${e.callId}`]);
  });
});
