// The Lua scripts of a call record against the real Redis: claims, takeovers (in the crowd, alone,
// too late), retry waits, the retrying list, ctx.once, batching, and a TTL on every key written.
import { ErrorCode } from '@warren/jsonrpc';
import { silentLogger } from '@warren/logger';
import { Teardown, redisUrl, uniqueName, waitFor } from '@warren/testkit';
import { encodeMeta, toCallStatus } from '../src/record-codec';
import { keys } from '../src/keys';
import { RedisStore } from '../src/redis-store';
import type { ClaimArgs } from '../src/store-port';
import { args, deadline, result } from './store-harness';
import { TestPrefix } from './support';

const td = new Teardown();
const tp = new TestPrefix();
const k = keys(tp.prefix);
let store: RedisStore;

beforeAll(async () => {
  td.add(() => tp.destroy());
  store = new RedisStore(redisUrl(), 1000, k, silentLogger());
  td.add(() => store.close());
  expect(await store.ready(5000)).toBe(true);
});
afterAll(() => td.run());

it('claims a new call, makes a second claimant wait, and answers it from the store once finished', async () => {
  const callId = uniqueName('c');
  const first = args();
  expect(await store.claim(callId, first)).toEqual({ kind: 'run', attempt: 1, previousOwner: undefined });
  const record = await store.record(callId);
  expect(record).toMatchObject({ state: 'running', worker: 'w1', attempt: '1', token: first.token });
  expect(toCallStatus(callId, record, Date.now())).toMatchObject({ state: 'running', service: 'svc', method: 'work', deadline, worker: 'w1', attempt: 1 });
  expect(await tp.redis.pttl(k.call(callId))).toBeGreaterThan(15_000);

  const second = await store.claim(callId, args({ worker: 'w2' }));
  expect(second).toMatchObject({ kind: 'busy', owner: 'w1' });

  expect(await store.finish(callId, { state: 'done', result: result(42), ttlMs: 30_000, code: '' })).toBe(1);
  expect(await store.claim(callId, args({ worker: 'w2' }))).toEqual({ kind: 'stored', result: result(42), code: undefined, state: 'done', rid: '7' });
  const ttl = await tp.redis.pttl(k.call(callId));
  expect(ttl).toBeGreaterThan(20_000);
  // The first result wins: a late second finisher does not overwrite it.
  expect(await store.finish(callId, { state: 'done', result: result(1), ttlMs: 30_000, code: '' })).toBe(0);
  expect((await store.record(callId))['result']).toBe(result(42));
  expect(toCallStatus(callId, await store.record(callId), Date.now())).toMatchObject({ state: 'done', response: { result: 42 } });
  expect(toCallStatus(callId, await store.record(callId), Date.now()).leaseUntil).toBeUndefined();
});

it('takes over a call whose lease ran out, attempt + 1, and dead-letters it past maxAttempts', async () => {
  const callId = uniqueName('c');
  expect(await store.claim(callId, args({ leaseMs: 30, maxAttempts: 2 }))).toMatchObject({ kind: 'run', attempt: 1 });
  let takeover: Awaited<ReturnType<RedisStore['claim']>> | undefined;
  await waitFor(async () => {
    takeover = await store.claim(callId, args({ worker: 'w2', leaseMs: 30, maxAttempts: 2 }));
    return takeover.kind !== 'busy';
  });
  expect(takeover).toEqual({ kind: 'run', attempt: 2, previousOwner: 'w1' });
  let dead: Awaited<ReturnType<RedisStore['claim']>> | undefined;
  await waitFor(async () => {
    dead = await store.claim(callId, args({ worker: 'w3', maxAttempts: 2 }));
    return dead.kind !== 'busy';
  });
  expect(dead).toEqual({ kind: 'dead', attempts: 2, lastOwner: 'w2' });
  expect(await store.record(callId)).toMatchObject({ state: 'failed', code: String(ErrorCode.WorkerLost) });
  // A later delivery of the same call is answered with the same failure.
  expect(await store.claim(callId, args())).toEqual({ kind: 'stored', result: undefined, code: ErrorCode.WorkerLost, state: 'failed', rid: '7' });
});

it('release gives an unfinished call back at once; only the owner can release or renew it', async () => {
  const callId = uniqueName('c');
  const first = args();
  await store.claim(callId, first);
  expect(await store.release(callId, 'not-the-owner')).toBe(0);
  expect(await store.renew(callId, 'not-the-owner', 5000)).toBe(-1);
  expect(await store.renew(callId, first.token, 5000)).toBe(0);
  expect(await store.release(callId, first.token)).toBe(1);
  expect((await store.record(callId))['state']).toBe('queued');
  // Given back, not lost: no previous owner to suspect.
  expect(await store.claim(callId, args({ worker: 'w2', takeover: false }))).toEqual({ kind: 'run', attempt: 2, previousOwner: undefined });
});

/** Claims `callId` as `worker` until its current owner's lease has run out (the claim is not `busy`). */
async function afterLapse(callId: string, over: Partial<ClaimArgs>): Promise<Awaited<ReturnType<RedisStore['claim']>> | undefined> {
  let reply: Awaited<ReturnType<RedisStore['claim']>> | undefined;
  await waitFor(async () => {
    reply = await store.claim(callId, args({ takeover: false, ...over }));
    return reply.kind !== 'busy';
  });
  return reply;
}

it('a call in its first crash is taken over by any claim; its second takeover only by a claim made alone, outside which it changes nothing', async () => {
  const callId = uniqueName('c');
  await store.claim(callId, args({ leaseMs: 30 }));
  // Its first crash: taken over in the crowd, as attempt 2.
  expect(await afterLapse(callId, { worker: 'w2', leaseMs: 30 })).toEqual({ kind: 'run', attempt: 2, previousOwner: 'w1' });
  // Its second: a claim outside the suspect lane gets it as expired, and nothing changes.
  expect(await afterLapse(callId, { worker: 'w3' })).toEqual({ kind: 'expired', lastOwner: 'w2', attempts: 2 });
  expect(await store.claim(callId, args({ worker: 'w3', takeover: false }))).toEqual({ kind: 'expired', lastOwner: 'w2', attempts: 2 });
  expect(await store.record(callId)).toMatchObject({ state: 'running', worker: 'w2', attempt: '2' });
  expect(await store.claim(callId, args({ worker: 'w3', takeover: true }))).toEqual({ kind: 'run', attempt: 3, previousOwner: 'w2' });
});

it('a takeover at the last allowed attempt is made only alone, even in a first crash (maxAttempts 2)', async () => {
  const callId = uniqueName('c');
  await store.claim(callId, args({ leaseMs: 30, maxAttempts: 2 }));
  expect(await afterLapse(callId, { worker: 'w2', maxAttempts: 2 })).toEqual({ kind: 'expired', lastOwner: 'w1', attempts: 1 });
  expect(await store.claim(callId, args({ worker: 'w2', maxAttempts: 2, takeover: true }))).toEqual({ kind: 'run', attempt: 2, previousOwner: 'w1' });
});

it('a takeover with too little time left is not made: the call is recorded expired (-32001) and answered from the store; a live owner is still waited for', async () => {
  const callId = uniqueName('c');
  await store.claim(callId, args({ leaseMs: 200 }));
  expect(await store.claim(callId, args({ worker: 'w2', takeover: false, late: true }))).toMatchObject({ kind: 'busy', owner: 'w1' });
  expect(await afterLapse(callId, { worker: 'w2', takeover: true, late: true })).toEqual({ kind: 'stored', result: undefined, code: ErrorCode.DeadlineExceeded, state: 'expired', rid: '7' });
  expect(toCallStatus(callId, await store.record(callId), Date.now())).toMatchObject({ state: 'expired', attempt: 1, response: { error: { code: ErrorCode.DeadlineExceeded } } });
  expect(await tp.redis.pttl(k.call(callId))).toBeGreaterThan(20_000);
  // A late claim of a call nobody died on runs as usual.
  const fresh = uniqueName('c');
  expect(await store.claim(fresh, args({ late: true, takeover: false }))).toEqual({ kind: 'run', attempt: 1, previousOwner: undefined });
});

it('under a retry policy a lapsed call is sent to wait (retrying, still a suspect), then taken over, in its first crash by any claim, as attempt 2', async () => {
  const callId = uniqueName('c');
  const retry = { deadline, delaysMs: [400, 800] };
  await store.claim(callId, args({ leaseMs: 30, retry }));
  let reply: Awaited<ReturnType<RedisStore['claim']>> | undefined;
  await waitFor(async () => {
    reply = await store.claim(callId, args({ worker: 'w2', takeover: false, retry }));
    return reply.kind !== 'busy';
  });
  expect(reply).toMatchObject({ kind: 'retry', attempt: 2, delayMs: 400, lastOwner: 'w1' });
  const nextTryAt = reply?.kind === 'retry' ? reply.nextTryAt : 0;
  expect(nextTryAt).toBeGreaterThan(Date.now() - 1000);
  expect(toCallStatus(callId, await store.record(callId), Date.now())).toMatchObject({ state: 'retrying', worker: 'w1', attempt: 1, nextTryAt });
  expect(await tp.redis.pttl(k.call(callId))).toBeGreaterThan(0);
  // Back from its wait: taken over (no second wait), in the crowd since this is its first crash.
  expect(await store.claim(callId, args({ worker: 'w2', takeover: false, retry }))).toEqual({ kind: 'run', attempt: 2, previousOwner: 'w1' });
  expect(await store.finish(callId, { state: 'done', result: result(1), ttlMs: 30_000, code: '' })).toBe(1);
});

it('under a retry policy a lapsed call is taken over at once when the wait would end past its deadline', async () => {
  const callId = uniqueName('c');
  const retry = { deadline: Date.now() + 5000, delaysMs: [60_000, 60_000] };
  await store.claim(callId, args({ leaseMs: 30, retry }));
  let reply: Awaited<ReturnType<RedisStore['claim']>> | undefined;
  await waitFor(async () => {
    reply = await store.claim(callId, args({ worker: 'w2', takeover: false, retry }));
    return reply.kind !== 'busy';
  });
  expect(reply).toEqual({ kind: 'run', attempt: 2, previousOwner: 'w1' });
});

it('lists calls waiting to retry until their deadline; drops past ones on add and read, and unlisted ones', async () => {
  const [a, b, c] = [uniqueName('c'), uniqueName('c'), uniqueName('c')];
  await store.listWaiting('retrying', a, Date.now() + 60_000, 61_000);
  await store.listWaiting('retrying', b, Date.now() + 60_000, 61_000);
  await store.listWaiting('retrying', c, Date.now() + 150, 1000);
  expect(new Set(await store.waitingCalls('retrying', 100))).toEqual(new Set([a, b, c]));
  expect(await tp.redis.pttl(k.retrying)).toBeGreaterThan(59_000);
  await waitFor(async () => !(await store.waitingCalls('retrying', 100)).includes(c), { message: 'past its deadline, gone' });
  expect(await store.waitingCalls('retrying', 1)).toHaveLength(1);
  await store.unlistWaiting('retrying', [a]);
  expect(await store.waitingCalls('retrying', 100)).toEqual([b]);
  await store.unlistWaiting('retrying', [b]);
});

it('a lapsed call out of attempts is dead-lettered by any claim, isolated or not', async () => {
  const callId = uniqueName('c');
  await store.claim(callId, args({ leaseMs: 30, maxAttempts: 1 }));
  let reply: Awaited<ReturnType<RedisStore['claim']>> | undefined;
  await waitFor(async () => {
    reply = await store.claim(callId, args({ worker: 'w2', takeover: false, maxAttempts: 1 }));
    return reply.kind !== 'busy';
  });
  expect(reply).toEqual({ kind: 'dead', attempts: 1, lastOwner: 'w1' });
});

it('ctx.once effects: the first run marks and stores, a later run gets the result, a run that died inside is reported, a throw is forgotten', async () => {
  const callId = uniqueName('c');
  expect(await store.effectStart(callId, 'charge', 'Ptok1', 30_000)).toBe('R');
  expect(await store.effectStart(callId, 'charge', 'Ptok1', 30_000)).toBe('R'); // the same run again
  expect(await store.effectStart(callId, 'charge', 'Ptok2', 30_000)).toBe('P'); // tok1 never finished it
  expect(await store.effectComplete(callId, 'charge', '{"id":7}', 30_000)).toBe(1);
  expect(await store.effectStart(callId, 'charge', 'Ptok3', 30_000)).toBe('D{"id":7}');
  expect(await store.effectComplete(callId, 'charge', '{"id":8}', 30_000)).toBe(0); // the first result wins
  const ttl = await tp.redis.pttl(k.effects(callId));
  expect(ttl).toBeGreaterThan(20_000);
  expect(ttl).toBeLessThanOrEqual(30_000);

  expect(await store.effectStart(callId, 'mail', 'Ptok1', 30_000)).toBe('R');
  expect(await store.effectForget(callId, 'mail', 'Ptok2')).toBe(0); // not its mark
  expect(await store.effectForget(callId, 'mail', 'Ptok1')).toBe(1);
  expect(await store.effectStart(callId, 'mail', 'Ptok2', 30_000)).toBe('R');
});

it('a call whose owner died after a cancel is answered Cancelled on takeover, not run again', async () => {
  const callId = uniqueName('c');
  await store.claim(callId, args({ leaseMs: 30 }));
  await store.cancel(callId, 60_000);
  let next: Awaited<ReturnType<RedisStore['claim']>> | undefined;
  await waitFor(async () => {
    next = await store.claim(callId, args({ worker: 'w2' }));
    return next.kind !== 'busy';
  });
  expect(next).toEqual({ kind: 'cancelled' });
});

it('finish of a call that was never claimed (Redis was down at its start) leaves its outcome and what it was', async () => {
  const callId = uniqueName('c');
  const unclaimed = { worker: 'w9', meta: encodeMeta({ service: 'svc', method: 'work', deadline: Date.now() + 5000, rid: '"a"' }) };
  expect(await store.finish(callId, { state: 'failed', result: JSON.stringify({ jsonrpc: '2.0', error: { code: -32603, message: 'Internal error' }, id: 'a' }), ttlMs: 30_000, code: '-32603', unclaimed })).toBe(1);
  expect(toCallStatus(callId, await store.record(callId), Date.now())).toMatchObject({ state: 'failed', service: 'svc', method: 'work', worker: 'w9', response: { id: 'a', error: { code: -32603 } } });
});

it('a finished record keeps who ran the call, since when and what it was; a hostile method name cannot shift its fields', async () => {
  const callId = uniqueName('c');
  const meta = encodeMeta({ service: 'svc', method: 'bad\u001fname\tx', deadline, rid: JSON.stringify('\u001f') });
  const owner = args({ meta, attempt: 2 });
  expect(await store.claim(callId, owner)).toEqual({ kind: 'run', attempt: 2, previousOwner: undefined });
  const running = await store.record(callId);
  expect(Number(running['lease']) - Number(running['startedAt'])).toBe(owner.leaseMs);
  const reply = JSON.stringify({ jsonrpc: '2.0', result: 'x\u001fy', id: '\u001f' });
  expect(await store.finish(callId, { state: 'done', result: reply, ttlMs: 30_000, code: '' })).toBe(1);
  const status = toCallStatus(callId, await store.record(callId), Date.now());
  expect(status).toMatchObject({ state: 'done', service: 'svc', method: 'bad\ufffdname\ufffdx', worker: 'w1', attempt: 2, deadline, startedAt: Number(running['startedAt']), response: { result: 'x\u001fy', id: '\u001f' } });
  expect(status.finishedAt).toBeGreaterThanOrEqual(Number(running['startedAt']));
  expect(status.leaseUntil).toBeUndefined();
});

it('sends the claims and finishes of one tick as one script call each, with one reply per call', async () => {
  // What the store hands to ioredis (ioredis' auto-pipelining re-enters the command method, so count here).
  const spy = jest.spyOn(store as unknown as { run: (name: string, ...args: unknown[]) => Promise<unknown> }, 'run');
  const sent = (name: string): number => spy.mock.calls.filter((c) => c[0] === name).length;
  try {
    const ids = Array.from({ length: 10 }, () => uniqueName('c'));
    const owners = ids.map(() => args());
    const done = uniqueName('c');
    const doneOwner = args();
    await store.claim(done, doneOwner);
    await store.finish(done, { state: 'done', result: result(3), ttlMs: 30_000, code: '' });
    spy.mockClear();
    // Mixed outcomes in one batch: nine new calls, and one finished already.
    const replies = await Promise.all([...ids.slice(0, 9).map((id, i) => store.claim(id, owners[i] ?? args())), store.claim(done, args())]);
    expect(sent('inflightClaim')).toBe(1);
    expect(replies.slice(0, 9).every((r) => r.kind === 'run')).toBe(true);
    expect(replies[9]).toMatchObject({ kind: 'stored', result: result(3) });
    const finished = await Promise.all(ids.slice(0, 9).map((id, i) => store.finish(id, { state: 'done', result: result(i), ttlMs: 30_000, code: '' })));
    expect(sent('inflightFinish')).toBe(1);
    expect(finished).toEqual(Array(9).fill(1));
    expect((await store.record(ids[4] ?? '')).result).toBe(result(4));
  } finally {
    spy.mockRestore();
  }
});

it('sends what was asked of it before close(), then closes: an auto-pipelined write is not lost behind QUIT', async () => {
  // A view's store pipelines automatically; QUIT bypasses the pipeline, so it used to overtake what the same tick queued.
  const view = new RedisStore(redisUrl(), 1000, k, silentLogger());
  td.add(() => view.close());
  expect(await view.ready(5000)).toBe(true);
  const ids = [uniqueName('c'), uniqueName('c'), uniqueName('c')];
  const mark = (id: string | undefined): Promise<boolean> => view.markQueued(id ?? '', encodeMeta({ service: 'svc', method: 'work', deadline, rid: '1' }), 30_000);
  const marked = [mark(ids[0]), mark(ids[1])];
  // Redis busy for 50 ms with the first pipeline: a write asked meanwhile waits for its answer before it leaves.
  void view.client.eval("local t = redis.call('TIME') local u = t[1] * 1e6 + t[2] repeat t = redis.call('TIME') until t[1] * 1e6 + t[2] - u > 50000 return 1", 0);
  await new Promise<void>((resolve) => setImmediate(resolve));
  marked.push(mark(ids[2]));
  await view.close();
  expect(await Promise.all(marked)).toEqual([true, true, true]);
  expect((await store.record(ids[2] ?? '')).state).toBe('queued');
});

it('left no key without a TTL', async () => {
  expect(await tp.keys()).not.toHaveLength(0);
  expect(await tp.keysWithoutTtl()).toEqual([]);
});
