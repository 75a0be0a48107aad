// When trackQueued writes a call's queued mark: only once the call has waited `markAfterMs` unanswered, so
// the calls a cluster keeping up answers (most) cost Redis nothing; a marked call that is then answered, or
// fails on the caller's side, has its mark dropped.
import type { CallInfo } from '@warren/calls';
import { trackQueued, type TrackQueuedOptions } from '../src/client';

type Settle = 'answered' | 'failed' | 'timeout' | 'aborted';

/** A caller whose sends and settles the test makes, and a view that notes what it was asked to write. */
function setup(options: TrackQueuedOptions = {}) {
  let send: (call: CallInfo) => void = () => undefined;
  let settle: (callId: string, how: Settle) => void = () => undefined;
  const marked: string[] = [];
  const unmarked: string[] = [];
  const marks = trackQueued(
    { onSend: (l) => void (send = l), onSettle: (l) => void (settle = l) },
    {
      markQueued: (call) => (marked.push(call.callId), Promise.resolve(true)),
      unmarkQueued: (callId) => (unmarked.push(callId), Promise.resolve()),
    },
    undefined,
    options,
  );
  const call = (callId: string): CallInfo => ({ callId, method: 'work', id: callId, deadline: Date.now() + 10_000 });
  return { marks, marked, unmarked, send: (id: string) => send(call(id)), settle: (id: string, how: Settle) => settle(id, how) };
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

it('writes nothing for a call answered before its mark is due', async () => {
  const t = setup({ markAfterMs: 30 });
  t.send('quick');
  t.settle('quick', 'answered');
  await sleep(60);
  expect(t.marked).toEqual([]);
  expect(t.unmarked).toEqual([]);
});

it('marks the calls still waiting when their mark is due, oldest first, each once, with one timer', async () => {
  const t = setup({ markAfterMs: 30 });
  t.send('a');
  await sleep(10);
  t.send('b');
  t.send('c');
  t.settle('c', 'answered');
  await sleep(35);
  expect(t.marked).toEqual(['a', 'b']);
  await sleep(30);
  expect(t.marked).toEqual(['a', 'b']);
  // Answered after its mark: the mark is dropped; a timeout leaves it (to read `expired`).
  t.settle('a', 'answered');
  t.settle('b', 'timeout');
  await t.marks.flush();
  expect(t.unmarked).toEqual(['a']);
});

it('marks each call as it is sent with markAfterMs 0, and drops the mark of one that failed on this side', async () => {
  const t = setup({ markAfterMs: 0 });
  t.send('lost');
  expect(t.marked).toEqual(['lost']);
  t.settle('lost', 'failed');
  await t.marks.flush();
  expect(t.unmarked).toEqual(['lost']);
});

it('leaves out the calls `mark` refuses, and never drops marks with untrackedAnswers: false', async () => {
  const t = setup({ markAfterMs: 0, untrackedAnswers: false, mark: (call) => call.callId !== 'own' });
  t.send('own');
  t.send('theirs');
  t.settle('theirs', 'answered');
  await t.marks.flush();
  expect(t.marked).toEqual(['theirs']);
  expect(t.unmarked).toEqual([]);
});
