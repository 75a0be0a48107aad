// The suspect lane: work enters at once while no suspect is here; a suspect
// waits for the work running to end, holds new work back while it runs, and
// suspects take turns; aborts take a waiter off the queue.
import { SuspectLane } from '../src/runtime/suspect-lane';

const flush = (): Promise<void> => new Promise((r) => setImmediate(r));

it('lets work in synchronously while no suspect is here', () => {
  const lane = new SuspectLane();
  expect(lane.enter(new AbortController())).toBe(true);
  expect(lane.enter(new AbortController())).toBe(true);
  expect(lane.running).toBe(2);
  lane.leave();
  lane.leave();
  expect(lane.running).toBe(0);
});

it('runs a suspect only once the work running has left, and holds new work back until it is done', async () => {
  const lane = new SuspectLane();
  const events: string[] = [];
  expect(lane.enter(new AbortController())).toBe(true);
  const suspect = lane.alone(new AbortController()).then((end) => {
    events.push('suspect runs');
    return end;
  });
  const later = lane.enter(new AbortController());
  expect(later).not.toBe(true);
  void (later as Promise<boolean>).then((ok) => events.push(`later enters ${ok}`));
  await flush();
  expect(events).toEqual([]);
  lane.leave();
  const end = await suspect;
  await flush();
  expect(events).toEqual(['suspect runs']);
  expect(lane.running).toBe(0);
  end?.();
  await flush();
  expect(events).toEqual(['suspect runs', 'later enters true']);
  expect(lane.running).toBe(1);
});

it('gives suspects one turn each, in order, before the work held back', async () => {
  const lane = new SuspectLane();
  const events: string[] = [];
  const turn = (name: string) => lane.alone(new AbortController()).then((end) => {
    events.push(name);
    return end;
  });
  const a = turn('a');
  const b = turn('b');
  const held = lane.enter(new AbortController()) as Promise<boolean>;
  void held.then(() => events.push('held'));
  (await a)?.();
  (await b)?.();
  await held;
  expect(events).toEqual(['a', 'b', 'held']);
});

it('takes an aborted waiter off its queue, and an aborted suspect gives its turn away', async () => {
  const lane = new SuspectLane();
  expect(lane.enter(new AbortController())).toBe(true);
  const first = new AbortController();
  const suspect = lane.alone(first);
  const gated = new AbortController();
  const held = lane.enter(gated) as Promise<boolean>;
  gated.abort();
  expect(await held).toBe(false);
  first.abort(); // while it waits for the running work
  expect(await suspect).toBeUndefined();
  // The lane is open again: new work enters at once.
  expect(lane.enter(new AbortController())).toBe(true);
  expect(lane.running).toBe(2);
});

it('under random interleavings, a suspect never runs beside other work, and everything ends (no lost wake-up, no leak)', async () => {
  let seed = 316;
  const random = (): number => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  for (let round = 0; round < 15; round++) {
    const lane = new SuspectLane();
    let alone = 0;
    let beside = 0;
    let violations = 0;
    const tasks: Promise<void>[] = [];
    for (let i = 0; i < 40; i++) {
      const abort = new AbortController();
      if (random() < 0.1) setTimeout(() => abort.abort(), Math.floor(random() * 5));
      const hold = Math.floor(random() * 4);
      if (random() < 0.3) {
        tasks.push((async () => {
          const end = await lane.alone(abort);
          if (!end) return;
          alone++;
          if (alone > 1 || beside > 0) violations++;
          await new Promise((r) => setTimeout(r, hold));
          alone--;
          end();
        })());
      } else {
        tasks.push((async () => {
          const entered = lane.enter(abort);
          if (entered !== true && !(await entered)) return;
          beside++;
          if (alone > 0) violations++;
          await new Promise((r) => setTimeout(r, hold));
          beside--;
          lane.leave();
        })());
      }
      if (random() < 0.5) await new Promise((r) => setTimeout(r, Math.floor(random() * 2)));
    }
    await Promise.all(tasks);
    expect({ round, violations, running: lane.running, suspects: lane.suspectsWaiting }).toEqual({ round, violations: 0, running: 0, suspects: 0 });
    expect(lane.enter(new AbortController())).toBe(true);
  }
});
