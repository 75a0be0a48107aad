// Side effects through ctx.once while workers are SIGKILLed mid-handler: 300
// calls kept in flight on three tracked workers (respawned when they die),
// each committing its side effect first (ctx.once) and then running 100-300
// ms. Killed workers' calls are taken over; the takeover gets the effect's
// stored result instead of committing it again. No effect is doubled and no
// caller hangs. A call whose worker died inside the effect itself is
// answered -32005 (effect_interrupted) rather than risk a double; half the
// calls pass `recover` (look the effect up, commit it if absent), and those
// are all answered with their result.
import { Teardown } from '@warren/testkit';
import { effectsKey } from '../../../scripts/soak-worker';
import { Load, lateOrUnexpected, tally } from './load';
import { RespawningPool } from './pool';
import { FaultRig } from './rig';

const td = new Teardown();
afterAll(() => td.run());

it('workers SIGKILLed mid-handler with 300 calls in flight: no side effect made through ctx.once is doubled, no caller hangs', async () => {
  const started = Date.now();
  const rig = await FaultRig.start(td, { workers: 0, leaseMs: 1000, prefetch: 32 });
  const pool = await RespawningPool.start(rig, 3);
  td.add(() => pool.stop());

  const load = new Load(rig.client, { total: 2000, inflight: 300, timeoutMs: 30_000, notifyEvery: 0, params: (i) => ({ ms: 100 + (i % 201), n: i, effect: i % 2 === 0 ? 'once' : 'recover' }) });
  const killed: string[] = [];
  for (const at of [300, 700, 1100, 1500]) {
    await load.settledAtLeast(at, 60_000);
    killed.push(await pool.kill());
  }
  await load.finished;
  await pool.stop();

  const pipeline = rig.redis.pipeline();
  for (const c of load.calls) pipeline.llen(effectsKey(rig.prefix, c.callId));
  const effects = ((await pipeline.exec()) ?? []).map(([err, n]) => (err ? -1 : Number(n)));
  const runs = await rig.runs(load.calls.map((c) => c.callId));
  const doubled = effects.filter((n) => n > 1).length;
  const okWithout = load.calls.filter((c, i) => c.outcome === 'ok' && effects[i] !== 1).length;
  const recovering = load.calls.filter((_, i) => i % 2 === 1);
  const figures = { calls: load.calls.length, tally: tally(load.calls), withRecover: tally(recovering), killed: killed.length, rerun: runs.filter((r) => r.length > 1).length, doubled, okWithoutOneEffect: okWithout, slowestStartMs: Math.max(...pool.startMs), totalMs: Date.now() - started };
  console.log(`once run: ${JSON.stringify(figures)}`);

  // Kills landed mid-handler: calls were taken over (run again), and their effects were not.
  expect(figures.rerun).toBeGreaterThan(0);
  expect(doubled).toBe(0);
  expect(okWithout).toBe(0);
  // Every caller got its answer by its deadline: its result, or -32005 if its worker died inside the effect.
  expect(lateOrUnexpected(load.calls, ['ok', -32005], 1500).slice(0, 5)).toEqual([]);
  expect(lateOrUnexpected(recovering, ['ok'], 1500).slice(0, 5)).toEqual([]);
  expect(tally(load.calls)['hung']).toBeUndefined();
}, 150_000);
