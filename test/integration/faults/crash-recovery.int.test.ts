// Recovery at full speed (docs/reliability-faults.md, "Poison calls: the suspect lane"): three tracked worker
// processes at prefetch 100 with 300 calls in flight and 30 s deadlines; two of them are SIGKILLed at
// once with about 100 calls running on each. Those calls are suspects, each in its first crash: the
// survivor takes them over in the crowd, as it takes new work, rather than one at a time with new work
// held back. Every call is answered with its result by its deadline, and the survivor runs other work
// while it runs the suspects, not only after them.
//
// The figures (the rate of new calls per live worker before and after the kill, how long recovery
// took) are printed, not asserted: speed belongs to the benchmarks. What is asserted is counted, from
// the survivor's call records (each run's claim and finish, on Redis' clock): the suspects ran there in
// parallel, and other work ran beside them. Run alone (the design before), neither would hold.
import { InflightView, type CallStatus } from '@warren/inflight';
import { Teardown, redisUrl, waitFor } from '@warren/testkit';
import { expectNewCallsSucceed, repeatedRuns } from './checks';
import { Load, lateOrUnexpected, tally, type CallRecord } from './load';
import { FaultRig, workService } from './rig';

const td = new Teardown();
afterAll(() => td.run());

type Run = Required<Pick<CallStatus, 'startedAt' | 'finishedAt'>>;
const overlap = (a: Run, b: Run): boolean => a.startedAt < b.finishedAt && b.startedAt < a.finishedAt;

/** The most runs in progress at one moment. */
function mostAtOnce(runs: readonly Run[]): number {
  const edges = runs.flatMap((r) => [[r.startedAt, 1], [r.finishedAt, -1]] as const).sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let now = 0;
  let most = 0;
  for (const [, step] of edges) most = Math.max(most, (now += step));
  return most;
}

/** Calls settled per second in [from, to), per worker. */
function rate(calls: readonly CallRecord[], from: number, to: number, workers: number): number {
  const n = calls.filter((c) => c.settledAt !== undefined && c.settledAt >= from && c.settledAt < to).length;
  return to > from ? Math.round((n * 1000) / (to - from) / workers) : 0;
}

it('two of three workers at prefetch 100 killed with 300 calls in flight: no call fails or passes its deadline, and the survivor takes the suspects over in parallel, beside other work', async () => {
  const rig = await FaultRig.start(td, { workers: 0, leaseMs: 1000, prefetch: 100 });
  const view = new InflightView({ redis: redisUrl(), keyPrefix: rig.prefix });
  td.add(() => view.close());
  const workers = await Promise.all(['r0', 'r1', 'r2'].map((id) => rig.spawnWorker(id)));
  const load = new Load(rig.client, { total: 2500, inflight: 300, timeoutMs: 30_000, notifyEvery: 0, params: (i) => ({ ms: 100 + (i % 201), n: i }) });
  await load.settledAtLeast(300, 60_000);
  const measuredFrom = Date.now();
  await load.settledAtLeast(900, 60_000);
  // Killed while each is running many calls (as their heartbeats say), not in a lull of a loaded machine.
  const busy = async (): Promise<boolean> => (await view.workers({ service: workService })).filter((w) => w.instanceId !== 'r2' && w.inflight >= 30).length === 2;
  await waitFor(busy, { timeoutMs: 30_000, intervalMs: 20, message: 'r0 and r1 each running 30 calls or more' });
  const killedAt = Date.now();
  await Promise.all([workers[0]?.kill('SIGKILL'), workers[1]?.kill('SIGKILL')]);
  await load.finished;

  const runs = await rig.runs(load.calls.map((c) => c.callId));
  const killed = new Set(['r0', 'r1']);
  // A suspect: its first run was on a killed worker and it was answered by the survivor.
  const suspects = load.calls.filter((_c, i) => killed.has(runs[i]?.[0] ?? '') && (runs[i]?.length ?? 0) > 1);
  const recoveredAt = Math.max(...suspects.map((c) => c.settledAt ?? 0));
  const newCalls = load.calls.filter((c) => c.issuedAt > killedAt);
  // New calls answered before the last suspect was: the survivor did not hold its new work back.
  const servedDuringRecovery = newCalls.filter((c) => c.settledAt !== undefined && c.settledAt < recoveredAt).length;
  const lastSettled = Math.max(...load.calls.map((c) => c.settledAt ?? 0));
  // The survivor's runs, from the call records: the suspects' takeovers, and the other calls it ran.
  const records = await Promise.all(load.calls.map((c) => view.status(c.callId)));
  const onSurvivor = (r: CallStatus): r is CallStatus & Run => r.worker === 'r2' && r.startedAt !== undefined && r.finishedAt !== undefined;
  const suspectIds = new Set(suspects.map((c) => c.callId));
  const takeovers = records.filter((r) => suspectIds.has(r.callId)).filter(onSurvivor);
  const besideTakeovers = records.filter((r) => !suspectIds.has(r.callId)).filter(onSurvivor).filter((r) => takeovers.some((t) => overlap(r, t))).length;
  const figures = {
    calls: load.calls.length,
    tally: tally(load.calls),
    late: lateOrUnexpected(load.calls, ['ok'], 0).length,
    suspects: suspects.length,
    recoveryMs: recoveredAt - killedAt,
    servedDuringRecovery,
    takeoversAtOnce: mostAtOnce(takeovers),
    besideTakeovers,
    preKillRatePerWorker: rate(load.calls, measuredFrom, killedAt, 3),
    postKillRatePerWorker: Math.round((newCalls.length * 1000) / Math.max(1, lastSettled - killedAt)),
  };
  console.log(`crash recovery: ${JSON.stringify(figures)}`);

  // Every call answered with its own result, none after its deadline (no slack).
  expect({ tally: figures.tally, wrong: lateOrUnexpected(load.calls, ['ok'], 0).slice(0, 5) }).toEqual({ tally: { ok: load.calls.length }, wrong: [] });
  // The killed workers were running calls, and the survivor took them over.
  expect(suspects.length).toBeGreaterThan(0);
  expect(takeovers).toHaveLength(suspects.length);
  // Taken over in parallel, and beside other work: the survivor held nothing back for them.
  expect(figures.takeoversAtOnce).toBeGreaterThan(1);
  expect(besideTakeovers).toBeGreaterThan(0);
  expect(await repeatedRuns(rig, load.calls, killed)).toEqual([]);
  await expectNewCallsSucceed(rig);
}, 180_000);
