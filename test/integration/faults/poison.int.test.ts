// A poison message (its handler SIGKILLs its worker, on every attempt) among
// 250 calls kept in flight on three tracked workers that are respawned when
// they die. The poison's first crash takes the calls running beside it down
// too; each of them (the poison too) is then taken over in the crowd, on the
// survivors, beside new work. The poison's second crash takes down what ran
// beside it there; a call seen in two crashes (the poison, and any innocent
// one that shared both) runs alone in its next worker's suspect lane, so the
// poison's third crash is charged to it alone. It is dead-lettered after
// maxAttempts (3) runs and its caller gets -32005; no other call is answered
// -32005 or dead-lettered, not even those that were in both crowd crashes.
import { ErrorCode, JsonRpcError } from '@warren/jsonrpc';
import { Teardown, waitFor } from '@warren/testkit';
import { queueDepth } from '../../support/amqp';
import { expectNewCallsSucceed, repeatedRuns } from './checks';
import { Load, lateOrUnexpected, tally } from './load';
import { RespawningPool } from './pool';
import { FaultRig, workMethod, workService } from './rig';

const td = new Teardown();
afterAll(() => td.run());

it('one poison call among 250 in flight: it alone is dead-lettered (-32005 to its caller); every other call is answered', async () => {
  const started = Date.now();
  const rig = await FaultRig.start(td, { workers: 0, leaseMs: 1000, prefetch: 32 });
  const pool = await RespawningPool.start(rig, 3, { WORK_POISON: '1' });
  td.add(() => pool.stop());

  let settlePoison: (outcome: unknown) => void = () => undefined;
  const poisonSettled = new Promise<unknown>((resolve) => (settlePoison = resolve));
  // Deadlines long enough to outlast a pool that is briefly all dead: the poison kills three workers within
  // seconds, and on a loaded machine their respawns have taken 25 s to come up.
  const load = new Load(rig.client, { total: 1500, inflight: 250, timeoutMs: 60_000, until: poisonSettled });
  await load.settledAtLeast(250, 60_000);
  const poisonId = rig.client.nextCallId();
  const poisonSent = Date.now();
  rig.client.call(workMethod, { ms: 10, n: 0, poison: true }, { timeoutMs: 60_000, id: poisonId }).then(settlePoison, settlePoison);
  const poison = await poisonSettled;
  const poisonMs = Date.now() - poisonSent;
  await load.finished;
  await pool.stop();

  const deadLetters = rig.ns.names.deadLetterQueue(workService);
  await waitFor(async () => (await queueDepth(deadLetters)) >= 1, { timeoutMs: 10_000, message: 'the poison dead-lettered' }).catch(() => undefined);
  const [poisonRuns = []] = await rig.runs([poisonId]);
  const dead = new Set(pool.died);
  // Innocent calls whose first two runs were on workers that died: they shared both crowd crashes with the poison.
  const inTwoCrashes = (await rig.runs(load.calls.map((c) => c.callId))).filter((r) => r.length > 2 && dead.has(r[0] ?? '') && dead.has(r[1] ?? '')).length;
  const figures = { calls: load.calls.length, tally: tally(load.calls), workersDied: pool.died.length, poisonRuns: poisonRuns.length, inTwoCrashes, poisonMs, deadLettered: await queueDepth(deadLetters), slowestStartMs: Math.max(...pool.startMs), timeline: pool.timeline.join(', '), totalMs: Date.now() - started };
  console.log(`poison run: ${JSON.stringify(figures)}`);
  // What the calls that did not end well left in Redis (their record: state, worker, attempt), to tell a stall from a bug.
  const wrong = load.calls.filter((c) => c.outcome !== 'ok').slice(0, 5);
  if (wrong.length > 0) console.log(JSON.stringify(await Promise.all(wrong.map(async (c) => ({ ...c, record: (await rig.redis.get(`${rig.prefix}:rec:{${c.callId}}`))?.split('\u001f').slice(0, 6) })))));

  expect(poison).toBeInstanceOf(JsonRpcError);
  expect((poison as JsonRpcError).code).toBe(ErrorCode.WorkerLost);
  // It ran maxAttempts times, each run killing its worker, each on another worker.
  expect(poisonRuns).toHaveLength(3);
  expect(new Set(poisonRuns).size).toBe(3);
  expect(pool.died).toEqual(expect.arrayContaining(poisonRuns));
  expect(pool.died).toHaveLength(3);
  // No innocent call was answered -32005 (or anything but its result), late, or dead-lettered.
  expect({ tally: figures.tally, wrong: lateOrUnexpected(load.calls, ['ok'], 1500).slice(0, 5) }).toEqual({ tally: { ok: load.calls.length }, wrong: [] });
  expect(figures.deadLettered).toBe(1);
  // Calls repeated only after their worker died.
  expect(await repeatedRuns(rig, load.calls, dead)).toEqual([]);
  await expectNewCallsSucceed(rig);
}, 240_000);
