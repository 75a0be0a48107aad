// Workers SIGKILLed (child processes, no chance to clean up) with a few
// hundred calls in flight: RabbitMQ redelivers what they held, the in-flight
// tracker lets a survivor take each call over once the dead worker's lease
// runs out, and every call ends with its answer. Only a run cut short by its
// worker's death is ever repeated; no call runs on two live workers. The
// calls a dead worker was running are suspects: taken over on the survivors
// beside new work, and alone (the suspect lane) only if the second kill
// catches them again in their takeover. faults/crash-recovery does the same
// at prefetch 100 with both kills at once.
import { Teardown } from '@warren/testkit';
import { activeTimers, expectNewCallsSucceed, expectNotesDelivered, expectQuiet, repeatedRuns } from './checks';
import { Load, lateOrUnexpected, tally } from './load';
import { FaultRig } from './rig';

const td = new Teardown();
afterAll(() => td.run());

it('two of three workers killed mid-load, one replaced: every call answered, nothing run twice on live workers', async () => {
  const rig = await FaultRig.start(td, { workers: 0, leaseMs: 1000, prefetch: 32 });
  const [k0, k1] = await Promise.all(['k0', 'k1', 'k2'].map((id) => rig.spawnWorker(id)));
  const timers = activeTimers();
  const load = new Load(rig.client, { total: 2000, inflight: 300, timeoutMs: 15_000, params: (i) => ({ ms: 100 + (i % 201), n: i }) });
  await load.settledAtLeast(300);
  await k0?.kill('SIGKILL');
  await load.settledAtLeast(900);
  await k1?.kill('SIGKILL');
  await rig.spawnWorker('k3');
  await load.finished;

  expect({ tally: tally(load.calls), wrong: lateOrUnexpected(load.calls, ['ok'], 1500).slice(0, 5) }).toEqual({ tally: { ok: 2000 }, wrong: [] });
  const killed = new Set(['k0', 'k1']);
  expect(await repeatedRuns(rig, load.calls, killed)).toEqual([]);
  // The dead workers' calls were taken over (attempt 2 on a survivor), not lost and not answered twice.
  const runs = await rig.runs(load.calls.map((c) => c.callId));
  expect(runs.filter((r) => r.length > 1).length).toBeGreaterThan(0);
  await expectNotesDelivered(rig, load.notes);
  await expectNewCallsSucceed(rig);
  await expectQuiet(rig, timers, { serviceConsumers: 2 });
}, 90_000);
