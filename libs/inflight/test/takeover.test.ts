// When a suspect is taken over in the crowd and when alone (takeover.ts), and what the tracker does
// with it: a first-crash takeover holds nothing back, a late one is not started.
import { SuspectLane } from '../../amqp/src/runtime/suspect-lane';
import type { RunningCall } from '@warren/calls';
import { ErrorCode } from '@warren/jsonrpc';
import { silentLogger } from '@warren/logger';
import { claimMode, takeoverAlone, tooLateToTakeOver } from '../src/takeover';
import { StoreCallTracker, type Decision } from '../src/call-tracker';
import { FakeStore } from './fake-store';

describe('the rule', () => {
  it('takes a call over in the crowd only in its first crash, and never at its last allowed attempt', () => {
    // [next attempt, maxAttempts] → alone?
    const cases: [number, number, boolean][] = [[2, 3, false], [3, 3, true], [2, 2, true], [2, 5, false], [3, 5, true], [4, 5, true], [2, 1, true]];
    expect(cases.map(([next, max]) => takeoverAlone(next, max))).toEqual(cases.map(([, , alone]) => alone));
  });

  it('is exact: an innocent call beside a poison call in every crowd crash reaches its last attempt alone', () => {
    // The poison is in every crash an innocent one is charged for; it runs alone once it is past its crowd takeovers.
    for (const maxAttempts of [2, 3, 4, 5]) {
      let attempt = 1;
      // Charged while its runs are in the crowd; a lone run is never charged (the poison is not beside it).
      while (attempt < maxAttempts && !takeoverAlone(attempt + 1, maxAttempts)) attempt++;
      const lastRunAlone = takeoverAlone(attempt + 1, maxAttempts);
      expect({ maxAttempts, deadLettered: attempt + 1 > maxAttempts, lastRunAlone }).toEqual({ maxAttempts, deadLettered: false, lastRunAlone: true });
    }
  });

  it('says late when less than the minimum is left before the deadline', () => {
    expect(tooLateToTakeOver(1300, 1000, 1000)).toBe(true);
    expect(tooLateToTakeOver(2000, 1000, 1000)).toBe(false);
  });

  it('maps a claim to its script mode: a running first delivery is never late; late wins over alone', () => {
    expect([
      claimMode({ takeover: false }), claimMode({ takeover: true }), claimMode({ takeover: false, running: true, late: true }),
      claimMode({ takeover: true, late: true }), claimMode({ takeover: false, late: true }),
    ]).toEqual(['0', '1', 'r', 'l', 'l']);
  });
});

describe('the tracker', () => {
  let store: FakeStore;
  let lane: SuspectLane;
  let tracker: StoreCallTracker;
  let seq = 0;
  const call = (over: Partial<RunningCall> = {}): RunningCall => ({
    callId: `t${++seq}`, id: seq, method: 'work', service: 'svc', worker: 'me', attempt: 2, deadline: Date.now() + 10_000, startedAt: Date.now(), ...over,
  });
  const expectRun = (d: Decision): Extract<Decision, { action: 'run' }> => {
    if (d.action !== 'run') throw new Error(`expected run, got ${d.action}`);
    return d;
  };

  beforeEach(async () => {
    jest.useFakeTimers();
    store = new FakeStore();
    lane = new SuspectLane();
    tracker = new StoreCallTracker({ leaseMs: 3000, heartbeatMs: 1000, waitPollMs: 100, takeoverMinMs: 1000, logger: silentLogger() }, store);
    await tracker.start({ service: 'svc', instanceId: 'me', running: () => 0, isolation: lane });
  });
  afterEach(async () => {
    await tracker.stop();
    jest.useRealTimers();
  });

  it('runs a first-crash takeover in the crowd: the lane is not held, and new work is claimed beside it at once', async () => {
    const running = expectRun(await tracker.begin(call({ attempt: 1 }), new AbortController()));
    store.claimReplies.push({ kind: 'busy', owner: 'dead', leaseLeftMs: 50 }, { kind: 'run', attempt: 2, previousOwner: 'dead' });
    const suspect = tracker.begin(call(), new AbortController());
    await jest.advanceTimersByTimeAsync(100);
    const taken = expectRun(await suspect);
    expect(taken.attempt).toBe(2);
    // Claimed by ordinary claims, with the call running beside it still running.
    expect(store.claims.map((c) => c.args.takeover)).toEqual([false, false, false]);
    const fresh = call({ attempt: 1 });
    expectRun(await tracker.begin(fresh, new AbortController())).release();
    expect(store.claims.at(-1)?.callId).toBe(fresh.callId);
    expect(lane.suspectsWaiting).toBe(0);
    expect(tracker.health()).toMatchObject({ takeovers: 1, isolated: 0 });
    taken.release();
    running.release();
    expect(lane.running).toBe(0);
  });

  it('asks the store not to start a takeover with less than takeoverMinMs left, and answers the expired record -32001 at once', async () => {
    store.claimReplies.push({ kind: 'stored', result: undefined, code: ErrorCode.DeadlineExceeded, state: 'expired', rid: undefined });
    const late = call({ deadline: Date.now() + 500 });
    const decision = await tracker.begin(late, new AbortController());
    expect(store.claims[0]?.args.late).toBe(true);
    expect(decision.action).toBe('answer');
    expect(decision.action === 'answer' && (JSON.parse(decision.text) as { error: { code: number } }).error.code).toBe(ErrorCode.DeadlineExceeded);
    expect(lane.running).toBe(0);
    expectRun(await tracker.begin(call(), new AbortController())).release();
    expect(store.claims[1]?.args.late).toBe(false);
  });

  it('checks the time left again when a suspect\'s turn to run alone comes', async () => {
    const running = expectRun(await tracker.begin(call({ attempt: 1 }), new AbortController()));
    store.claimReplies.push({ kind: 'expired', lastOwner: 'dead', attempts: 2 }, { kind: 'stored', result: undefined, code: ErrorCode.DeadlineExceeded, state: 'expired', rid: undefined });
    const suspect = tracker.begin(call({ attempt: 3, deadline: Date.now() + 3000 }), new AbortController());
    await jest.advanceTimersByTimeAsync(2500);
    running.release();
    expect((await suspect).action).toBe('answer');
    expect(store.claims.slice(1).map((c) => [c.args.takeover, c.args.late])).toEqual([[false, false], [true, true]]);
  });
});
