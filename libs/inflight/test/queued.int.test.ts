// Calls no worker has taken yet: with trackQueued their caller records them,
// so status says `queued` (not `unknown`) until a worker claims them, and
// `expired` if none does before the deadline. The mark never overwrites a
// record a worker or a cancel wrote, and a claimed mark is no takeover.
import type { RpcClient, WarrenService } from '@warren/amqp';
import { ErrorCode, wireErrorOf } from '@warren/jsonrpc';
import { waitFor } from '@warren/testkit';
import type { StoreCallTracker } from '../src/call-tracker';
import { trackQueued } from '../src/client';
import { InflightView } from '../src/view';
import { parseRecord, queuedRecord } from '../src/record-codec';
import { keys } from '../src/keys';
import { testKeys, type WorkResult } from './fixtures/methods';
import { TestBed, startCall } from './support';

const bed = new TestBed();
const { ns, tp } = bed;
const serviceName = ns.service('queued');
let client: RpcClient;
let view: InflightView;
let tracker: StoreCallTracker;
let service: WarrenService;

beforeAll(async () => {
  ({ client, view } = await bed.start());
  // prefetch 1: a second call waits in the queue behind the first.
  ({ service, tracker } = await bed.trackedService(serviceName, { prefetch: 1 }));
  trackQueued(client, view);
});
afterAll(() => bed.close());

async function codeOf(answer: Promise<unknown>): Promise<number | string> {
  // The wire code: a worker's answer as it is, a failure on the caller's side (its abort, its deadline) by its wire form.
  return answer.then(() => 'resolved', (err: unknown) => wireErrorOf(err)?.code ?? String(err));
}

const starts = async (callId: string): Promise<number> => Number((await tp.redis.get(testKeys(tp.prefix, callId).starts)) ?? 0);

it('a queued record reads back as queued, attempt 0, with what the call is', () => {
  const fields = parseRecord(queuedRecord('\tadd\t1700000000000\t"a"', 1699999999000));
  expect(fields).toEqual({ state: 'queued', startedAt: '1699999999000', attempt: '0', meta: '\tadd\t1700000000000\t"a"' });
});

it('shows a call waiting in RabbitMQ as queued, then running, then done; the claim of a queued mark is no takeover', async () => {
  const takeovers = tracker.health().takeovers;
  const first = startCall<WorkResult>(client, 'work', { ms: 1500, value: 1 });
  await waitFor(async () => (await view.status(first.callId)).state === 'running', { message: 'first call running' });
  const sentAt = Date.now();
  const second = startCall<WorkResult>(client, 'work', { ms: 1500, value: 2 }, { timeoutMs: 15_000 });
  await waitFor(async () => (await view.status(second.callId)).state !== 'unknown', { message: 'second call marked' });
  const queued = await view.status(second.callId);
  expect(queued).toMatchObject({ state: 'queued', method: 'work', attempt: 0, cancelRequested: false });
  expect(queued.worker).toBeUndefined();
  expect(queued.deadline).toBeGreaterThanOrEqual(sentAt + 15_000);
  expect(queued.deadline).toBeLessThanOrEqual(Date.now() + 15_000);
  expect(await starts(second.callId)).toBe(0);
  // Listed beside the running one, as waiting since it was sent (the console's In flight rows).
  await waitFor(async () => (await view.list()).some((c) => c.callId === second.callId), { message: 'queued call listed' });
  const listed = (await view.list()).find((c) => c.callId === second.callId);
  expect(listed).toMatchObject({ state: 'queued', method: 'work', worker: '', attempt: 0, deadline: queued.deadline });
  expect(listed?.startedAt).toBeGreaterThanOrEqual(sentAt - 5);

  await expect(first.answer).resolves.toMatchObject({ value: 2, attempt: 1 });
  await waitFor(async () => (await view.status(second.callId)).state === 'running', { message: 'second call taken' });
  expect(await view.status(second.callId)).toMatchObject({ state: 'running', service: serviceName, worker: service.instanceId, attempt: 1 });
  // The worker's claim took it off the queued list (no view had to find it taken).
  await waitFor(async () => (await tp.redis.zscore(keys(tp.prefix).queued, second.callId)) === null, { message: 'queued entry dropped by the claim' });
  // Listed as running once its worker's heartbeat names it.
  await waitFor(async () => (await view.list()).find((c) => c.callId === second.callId)?.state === 'running', { message: 'taken call listed as running' });
  await expect(second.answer).resolves.toMatchObject({ value: 4, attempt: 1 });
  expect(await view.status(second.callId)).toMatchObject({ state: 'done', attempt: 1, response: { result: { value: 4 } } });
  expect(tracker.health().takeovers).toBe(takeovers);
}, 30_000);

it('a queued call nobody takes before its deadline reads as expired, and never runs', async () => {
  const first = startCall<WorkResult>(client, 'work', { ms: 1500, value: 3 });
  await waitFor(async () => (await view.status(first.callId)).state === 'running', { message: 'first call running' });
  const late = startCall<WorkResult>(client, 'work', { ms: 10, value: 4 }, { timeoutMs: 300 });
  expect(await codeOf(late.answer)).toBe(ErrorCode.DeadlineExceeded);
  // The caller's timer and the view's clock can meet in the deadline's very millisecond, where the call still counts as live.
  await waitFor(async () => (await view.status(late.callId)).state === 'expired', { timeoutMs: 1000, message: 'queued call expired' });
  expect(await view.status(late.callId)).toMatchObject({ state: 'expired', method: 'work', attempt: 0 });
  await first.answer;
  // The request expired in the queue (its message TTL), so it is never dequeued; give a stray one a moment to show.
  await new Promise((r) => setTimeout(r, 200));
  expect(await starts(late.callId)).toBe(0);
  expect((await view.status(late.callId)).state).toBe('expired');
}, 30_000);

it('cancelling a queued call by id skips it; the caller gets -32003', async () => {
  const first = startCall<WorkResult>(client, 'work', { ms: 1000, value: 5 });
  await waitFor(async () => (await view.status(first.callId)).state === 'running', { message: 'first call running' });
  const queued = startCall<WorkResult>(client, 'work', { ms: 10, value: 6 });
  await waitFor(async () => (await view.status(queued.callId)).state === 'queued', { message: 'second call marked' });
  expect(await view.cancel(queued.callId)).toEqual({ outcome: 'marked' });
  expect(await codeOf(queued.answer)).toBe(ErrorCode.Cancelled);
  expect(await starts(queued.callId)).toBe(0);
  expect(await view.status(queued.callId)).toMatchObject({ state: 'cancelled', response: { error: { code: ErrorCode.Cancelled } } });
  // Finished without a claim: the view drops it from the queued list when it reads it.
  expect((await view.list()).some((c) => c.callId === queued.callId)).toBe(false);
  expect(await tp.redis.zscore(keys(tp.prefix).queued, queued.callId)).toBeNull();
  await first.answer;
}, 30_000);

it('a call that fails on the caller\'s side (no route) leaves no queued mark and no row', async () => {
  const lost = startCall(client, `${serviceName}.nobody.serves.this`, {});
  expect(typeof (await codeOf(lost.answer))).toBe('number');
  await waitFor(async () => (await view.status(lost.callId)).state === 'unknown', { message: 'mark dropped' });
  expect((await view.list()).some((c) => c.callId === lost.callId)).toBe(false);
  expect(await tp.redis.zscore(keys(tp.prefix).queued, lost.callId)).toBeNull();
});

it('a mark that arrives after the worker took the call changes nothing', async () => {
  const done = startCall<WorkResult>(client, 'work', { ms: 0, value: 7 });
  await expect(done.answer).resolves.toMatchObject({ value: 14 });
  const before = await view.status(done.callId);
  expect(before.state).toBe('done');
  expect(await view.markQueued({ callId: done.callId, method: 'work', id: done.callId, deadline: Date.now() + 5000 })).toBe(false);
  expect(await view.status(done.callId)).toEqual(before);
  // Nor does dropping a mark: only a record that is still just the caller's mark goes.
  await view.unmarkQueued(done.callId);
  expect(await view.status(done.callId)).toEqual(before);
  expect(await tp.keysWithoutTtl()).toEqual([]);
});

it('skips the mark at once while Redis is unreachable, so an outage under load piles nothing up', async () => {
  // A view waits up to commandTimeoutMs for a connection before other operations: a mark that did
  // the same would keep this test past its timeout.
  const away = new InflightView({ redis: 'redis://127.0.0.1:1', keyPrefix: tp.prefix, commandTimeoutMs: 60_000 });
  try {
    const marks = await Promise.all(Array.from({ length: 50 }, (_, i) => away.markQueued({ callId: `away.${i}`, method: 'work', id: i, deadline: Date.now() + 5000 })));
    expect(marks.every((m) => m === false)).toBe(true);
  } finally {
    await away.close();
  }
});
