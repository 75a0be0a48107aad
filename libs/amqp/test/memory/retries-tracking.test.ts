import { ErrorCode, encodeResponse, successResponse, failureResponse, type ResponseMessage } from '@warren/jsonrpc';
import { RetryableError, type CallTracker } from '@warren/amqp';
import { outcomeOf, type Abortable, type Executed, type RunInfo, type RunningCall, type TrackedOutcome } from '@warren/calls';
import { World, useWorld, rejection, settleTicks, until } from './world';

let w: World;
useWorld((made) => (w = made));

describe('retries through delay queues', () => {
  it('waits each backoff out in the delay queue, then runs the call again as the next attempt', async () => {
    const attempts: [number, number][] = [];
    const t0 = Date.now();
    await w.service({
      name: 'flaky',
      methods: {
        'flaky.run': {
          retry: { attempts: 3, backoffMs: 1000, maxBackoffMs: 10_000 },
          handler: (_p, ctx) => {
            attempts.push([ctx.attempt, Date.now() - t0]);
            if (ctx.attempt < 3) throw new RetryableError('not yet');
            return 'third time';
          },
        },
      },
    });
    const client = await w.client();
    const call = client.call('flaky.run', [], { timeoutMs: 60_000 });
    await settleTicks();
    expect(attempts.map(([a]) => a)).toEqual([1]);
    expect(w.bus.queueNames().filter((q) => q.includes('.retry.'))).toHaveLength(2);
    await expect(until(call, 50)).resolves.toBe('third time');
    expect(attempts.map(([a]) => a)).toEqual([1, 2, 3]);
    // Attempt 2 after ~1 s in the delay queue, attempt 3 after ~2 s more.
    expect((attempts[1]?.[1] ?? 0) >= 1000 && (attempts[1]?.[1] ?? 0) < 1200).toBe(true);
    expect((attempts[2]?.[1] ?? 0) >= 3000 && (attempts[2]?.[1] ?? 0) < 3300).toBe(true);
  });

  it('answers the last error after the last attempt and dead-letters the request with retries_exhausted', async () => {
    await w.service({ name: 'doomed', methods: { 'doomed.run': { retry: { attempts: 2, backoffMs: 100 }, handler: () => { throw new RetryableError('never'); } } } });
    const client = await w.client();
    const err = await until(rejection(client.call('doomed.run', [], { timeoutMs: 60_000 })), 20);
    expect(err).toMatchObject({ code: ErrorCode.InternalError, message: 'never' });
    await settleTicks();
    expect(w.bus.queue('warren.svc.doomed.dead')?.messageCount).toBe(1);
  });
});

/** A tracker that decides from a script: what `begin` answers per call, and what it was told. */
class ScriptedTracker implements CallTracker {
  readonly finished: { call: RunningCall; text: string }[] = [];
  released = 0;
  constructor(private readonly decide: (call: RunningCall) => 'run' | { answer: ResponseMessage } | { deadLetter: ResponseMessage }) {}

  async run(call: RunningCall, _abort: Abortable, execute: (run: RunInfo) => Promise<Executed>): Promise<TrackedOutcome> {
    const d = this.decide(call);
    if (d === 'run') {
      try {
        const executed = await execute({ attempt: call.attempt });
        if (executed.kind === 'answer' && executed.text !== undefined) this.finished.push({ call, text: executed.text });
        return outcomeOf(executed);
      } finally {
        this.released++;
      }
    }
    if ('answer' in d) return { reply: encodeResponse(d.answer), settle: { action: 'ack' }, source: 'store' };
    return { reply: encodeResponse(d.deadLetter), settle: { action: 'dead-letter', reason: 'worker_lost', attempts: call.attempt }, source: 'store' };
  }
}

describe('tracking decisions (a scripted CallTracker)', () => {
  it('runs the handler when told to run, records the answer text the caller gets, and releases the claim', async () => {
    const tracker = new ScriptedTracker(() => 'run');
    let runs = 0;
    await w.service({ name: 'tracked', tracker, methods: { 'tracked.run': { handler: () => ++runs } } });
    const client = await w.client();
    await expect(until(client.call('tracked.run', [], { id: 'a' }))).resolves.toBe(1);
    expect(runs).toBe(1);
    expect(tracker.finished.map((f) => [f.call.method, f.call.attempt, JSON.parse(f.text)])).toEqual([['tracked.run', 1, { jsonrpc: '2.0', result: 1, id: 'a' }]]);
    expect(tracker.released).toBe(1);
  });

  it('answers from the store without running the handler', async () => {
    const tracker = new ScriptedTracker((call) => ({ answer: successResponse(call.id, 'from the store') }));
    let runs = 0;
    await w.service({ name: 'tracked', tracker, methods: { 'tracked.run': { handler: () => ++runs } } });
    const client = await w.client();
    await expect(until(client.call('tracked.run'))).resolves.toBe('from the store');
    expect(runs).toBe(0);
    expect(tracker.finished).toHaveLength(0);
  });

  it('dead-letters without running when told to, answering the caller with the given error', async () => {
    const tracker = new ScriptedTracker((call) => ({ deadLetter: failureResponse(call.id, { code: -32099, message: 'worker lost too often' }) }));
    let runs = 0;
    await w.service({ name: 'tracked', tracker, methods: { 'tracked.run': { handler: () => ++runs } } });
    const client = await w.client();
    expect(await until(rejection(client.call('tracked.run')))).toMatchObject({ code: -32099 });
    await settleTicks();
    expect(runs).toBe(0);
    expect(w.bus.queue('warren.svc.tracked.dead')?.messageCount).toBe(1);
  });

  it('runs untracked when the tracker fails, rather than failing the call', async () => {
    const tracker = new ScriptedTracker(() => {
      throw new Error('store down');
    });
    await w.service({ name: 'tracked', tracker, methods: { 'tracked.run': { handler: () => 'ran anyway' } } });
    const client = await w.client();
    await expect(until(client.call('tracked.run'))).resolves.toBe('ran anyway');
  });
});
