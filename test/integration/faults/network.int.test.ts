// Network faults between Warren and RabbitMQ, each with a few hundred calls in
// flight: connections cut with a reset (client side, worker side), a stall
// (packets held, no reset) that only heartbeats can notice, and added
// latency with deadlines shorter than the round trip. For each: every call
// settles by its deadline plus a small slack with a result or a documented
// error, no handler runs twice, every confirmed notification reaches every
// subscriber, new calls succeed afterwards, and nothing is left behind.
import { InflightView } from '@warren/inflight';
import { ErrorCode } from '@warren/jsonrpc';
import { Teardown, redisUrl } from '@warren/testkit';
import { activeTimers, expectNewCallsSucceed, expectNotesDelivered, expectQuiet, lostOnce, repeatedRuns } from './checks';
import { Load, lateOrUnexpected, tally, type Outcome } from './load';
import { FaultRig } from './rig';

const td = new Teardown();
afterAll(() => td.run());

/** How far past its deadline a call may settle: timers and a busy 2-core CI box, nothing more. */
const slackMs = 1500;

async function afterFault(rig: FaultRig, load: Load, allowed: readonly Outcome[], timersBefore: number): Promise<void> {
  await load.finished;
  const wrong = lateOrUnexpected(load.calls, allowed, slackMs);
  expect({ tally: tally(load.calls), wrong: wrong.slice(0, 5) }).toEqual({ tally: tally(load.calls), wrong: [] });
  // A repeat with a degraded tracker (Redis taken for gone) is another fault than one with every call tracked: say which.
  const repeated = await repeatedRuns(rig, load.calls);
  expect(repeated.length === 0 ? [] : { repeated, trackers: rig.trackers.map((t) => t.health()) }).toEqual([]);
  await expectNotesDelivered(rig, load.notes);
  await expectNewCallsSucceed(rig);
  await expectQuiet(rig, timersBefore);
}

it('client connections cut mid-load: confirmed calls get their answer after the reconnect, the rest -32007 or a result', async () => {
  const rig = await FaultRig.start(td);
  const timers = activeTimers();
  const load = new Load(rig.client, { total: 1000, inflight: 300 });
  await load.settledAtLeast(300);
  const lost = lostOnce(rig.clientConnection);
  rig.clientProxy.cutAll();
  await lost;
  await afterFault(rig, load, ['ok', ErrorCode.ConnectionLost], timers);
  // Most calls were confirmed before the cut and answered through the reply queue that waited for the client.
  expect(tally(load.calls)['ok']).toBeGreaterThan(850);
}, 60_000);

it('client connections cut mid-load, calls made with callWithRecovery: every call that reached RabbitMQ gets its result, none runs twice', async () => {
  const rig = await FaultRig.start(td);
  const view = new InflightView({ redis: redisUrl(), keyPrefix: rig.prefix });
  td.add(() => view.close());
  const timers = activeTimers();
  const load = new Load(rig.client, { total: 1000, inflight: 300, timeoutMs: 3000, recoverWith: view });
  await load.settledAtLeast(300);
  const lost = lostOnce(rig.clientConnection);
  rig.clientProxy.cutAll();
  await lost;
  // A reply lost with its connection is fetched from the in-flight store by call id instead of failing -32007.
  // What is left of -32007 are requests that never reached RabbitMQ (lost in the cut socket): they never ran.
  await afterFault(rig, load, ['ok', ErrorCode.ConnectionLost], timers + 1);
  const failed = load.calls.filter((c) => c.outcome === ErrorCode.ConnectionLost);
  expect((await rig.runs(failed.map((c) => c.callId))).filter((r) => r.length > 0)).toEqual([]);
}, 60_000);

it('worker connections cut mid-load: redelivered calls wait for their running first attempt, nobody runs twice', async () => {
  const rig = await FaultRig.start(td);
  const timers = activeTimers();
  const load = new Load(rig.client, { total: 1000, inflight: 300 });
  await load.settledAtLeast(300);
  const lost = Promise.all(rig.workerConnections.map((c) => lostOnce(c)));
  rig.workerProxy.cutAll();
  await lost;
  await afterFault(rig, load, ['ok'], timers);
  const health = rig.trackers.map((t) => t.health());
  // The cut calls came back and were answered from the store (or waited for their first run) instead of running again.
  expect(health.reduce((n, h) => n + h.answeredFromStore + h.waited, 0)).toBeGreaterThan(0);
}, 60_000);

it('a stall (packets held, no reset) is detected by heartbeats within a few seconds and recovered', async () => {
  const rig = await FaultRig.start(td, { heartbeatSeconds: 1 });
  const timers = activeTimers();
  const load = new Load(rig.client, { total: 1000, inflight: 300 });
  await load.settledAtLeast(300);
  const clientLost = lostOnce(rig.clientConnection);
  const workersLost = Promise.all(rig.workerConnections.map((c) => lostOnce(c)));
  const stalledAt = Date.now();
  rig.clientProxy.stall();
  rig.workerProxy.stall();
  // Nothing was closed: only the heartbeats (1 s) can tell the connections are dead.
  const [clientError, workerErrors] = await Promise.all([clientLost, workersLost]);
  const detectedMs = Date.now() - stalledAt;
  // Either side's heartbeat check may fire first: ours says "heartbeat"; RabbitMQ's own (it misses
  // our heartbeats too) closes its end, which the proxy passes on to us as a reset.
  expect(clientError.message).toMatch(/heartbeat|ECONNRESET/i);
  for (const err of workerErrors) expect(err.message).toMatch(/heartbeat|ECONNRESET/i);
  expect(detectedMs).toBeLessThan(5000);
  rig.clientProxy.resume();
  rig.workerProxy.resume();
  await afterFault(rig, load, ['ok', ErrorCode.ConnectionLost], timers);
}, 60_000);

it('latency: calls whose deadline is shorter than the round trip end with -32001 at their deadline, the others succeed', async () => {
  const rig = await FaultRig.start(td);
  const timers = activeTimers();
  rig.clientProxy.setLatency(150);
  rig.workerProxy.setLatency(150);
  // Every fifth call allows 300 ms, less than the four proxy hops (600 ms) a round trip now takes.
  const short = (i: number): boolean => i % 5 === 0;
  const load = new Load(rig.client, { total: 600, inflight: 300, timeoutMs: (i) => (short(i) ? 300 : 8000) });
  await load.finished;
  rig.clientProxy.setLatency(0);
  rig.workerProxy.setLatency(0);
  const byKind = (isShort: boolean): Record<string, number> => tally(load.calls.filter((_c, i) => short(i) === isShort));
  expect(byKind(true)).toEqual({ [ErrorCode.DeadlineExceeded]: 120 });
  expect(byKind(false)).toEqual({ ok: 480 });
  // Short calls that reached a worker after their deadline were dropped there without running.
  expect(rig.workers.reduce((n, w) => n + w.stats().expired, 0)).toBeGreaterThan(0);
  await afterFault(rig, load, ['ok', ErrorCode.DeadlineExceeded], timers);
}, 60_000);

it('a flapping network (cuts every few tens of ms, also during reconnects) ends with one connection and one consumer per participant', async () => {
  const rig = await FaultRig.start(td);
  const timers = activeTimers();
  const participants = rig.workerProxy.connectionCount;
  const load = new Load(rig.client, { total: 1000, inflight: 300 });
  await load.settledAtLeast(200);
  const until = Date.now() + 2500;
  while (Date.now() < until) {
    rig.clientProxy.cutAll();
    rig.workerProxy.cutAll();
    await new Promise((r) => setTimeout(r, 20 + Math.random() * 60));
  }
  await afterFault(rig, load, ['ok', ErrorCode.ConnectionLost], timers);
  expect(rig.clientProxy.connectionCount).toBe(1);
  expect(rig.workerProxy.connectionCount).toBe(participants);
}, 60_000);
