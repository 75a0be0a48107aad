// The tracker's one hook (run) over a scripted store, under fake timers: reply before the outcome is
// stored, and a first delivery that starts while its claim is on the way.
import type { Executed, RunningCall } from '@warren/calls';
import { CancelledError, ErrorCode, encodeResponse } from '@warren/jsonrpc';
import { StoreCallTracker } from '../src/call-tracker';
import { FakeStore } from './fake-store';
import { call, logger, ok, running, startTracker, stopTracker } from './tracker-harness';

let store: FakeStore;
let tracker: StoreCallTracker;

beforeEach(async () => {
  ({ store, tracker } = await startTracker());
});
afterEach(async () => {
  await stopTracker(tracker);
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
