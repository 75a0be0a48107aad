// The memory store against the Lua scripts: random sequences of the same operations on the same
// call ids, run on a RedisStore and on a MemoryInflightStore handle, give the same replies and leave
// the same records (times aside: the two clocks read at different moments). A claim's lease is either
// long (it never runs out mid-sequence) or 0 (it has run out by the next operation, on both clocks), so
// takeovers in the crowd and alone, and late ones, are compared too; renewals are long.
import fc from 'fast-check';
import { ErrorCode } from '@warren/jsonrpc';
import { silentLogger } from '@warren/logger';
import { Teardown, redisUrl, uniqueName } from '@warren/testkit';
import { encodeMeta, toCallStatus, type ClaimReply } from '../src/record-codec';
import { keys } from '../src/keys';
import { connectMemory } from '../src/memory-handle';
import { MemoryInflightStore } from '../src/memory-store';
import { RedisStore } from '../src/redis-store';
import type { TrackerStore, ViewStore } from '../src/store-port';
import { TestPrefix } from './support';

const td = new Teardown();
const tp = new TestPrefix();
let redis: RedisStore;

beforeAll(async () => {
  td.add(() => tp.destroy());
  redis = new RedisStore(redisUrl(), 2000, keys(tp.prefix), silentLogger());
  td.add(() => redis.close());
  expect(await redis.ready(5000)).toBe(true);
});
afterAll(() => td.run());

type Op =
  | { readonly op: 'claim'; readonly call: number; readonly worker: number; readonly takeover: boolean; readonly running: boolean; readonly late: boolean; readonly maxAttempts: number; readonly leaseMs: number }
  | { readonly op: 'finish'; readonly call: number; readonly state: 'done' | 'failed' | 'cancelled' | 'expired'; readonly unclaimed: boolean }
  | { readonly op: 'release' | 'renew' | 'retrying' | 'progress'; readonly call: number; readonly worker: number }
  | { readonly op: 'cancel' | 'markQueued' | 'status'; readonly call: number }
  | { readonly op: 'effectStart' | 'effectComplete' | 'effectForget'; readonly call: number; readonly worker: number; readonly name: 'a' | 'b' };

const call = fc.integer({ min: 0, max: 2 });
const worker = fc.integer({ min: 0, max: 2 });
const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ op: fc.constant('claim' as const), call, worker, takeover: fc.boolean(), running: fc.boolean(), late: fc.boolean(), maxAttempts: fc.integer({ min: 1, max: 4 }), leaseMs: fc.constantFrom(0, 60_000) }),
  fc.record({ op: fc.constant('finish' as const), call, state: fc.constantFrom('done' as const, 'failed' as const, 'cancelled' as const, 'expired' as const), unclaimed: fc.boolean() }),
  fc.record({ op: fc.constantFrom('release' as const, 'renew' as const, 'retrying' as const, 'progress' as const), call, worker }),
  fc.record({ op: fc.constantFrom('cancel' as const, 'markQueued' as const, 'status' as const), call }),
  fc.record({ op: fc.constantFrom('effectStart' as const, 'effectComplete' as const, 'effectForget' as const), call, worker, name: fc.constantFrom('a' as const, 'b' as const) }),
);

const deadline = Date.now() + 120_000;
const meta = encodeMeta({ service: 'svc', method: 'work', deadline, rid: '7' });
/** Each worker's claim token is fixed per call, so release/renew with it match only that worker's claim. */
const token = (w: number, c: number): string => `w${w}.${c}`;

/** Runs one op; the reply without what depends on the clock. */
async function apply(store: TrackerStore & ViewStore, ids: readonly string[], o: Op): Promise<unknown> {
  const id = ids[o.call] as string;
  switch (o.op) {
    case 'claim': {
      const reply: ClaimReply = await store.claim(id, {
        token: token(o.worker, o.call), worker: `w${o.worker}`, meta, attempt: 1, leaseMs: o.leaseMs, runningTtlMs: 60_000, maxAttempts: o.maxAttempts,
        finishedTtlMs: 60_000, workerLostCode: ErrorCode.WorkerLost, takeover: o.takeover, running: o.running, late: o.late,
      });
      return reply.kind === 'busy' ? { kind: 'busy', owner: reply.owner } : reply;
    }
    case 'finish':
      return store.finish(id, { state: o.state, result: JSON.stringify({ jsonrpc: '2.0', result: o.state, id: 7 }), ttlMs: 60_000, code: o.state === 'done' ? '' : '-32000', ...(o.unclaimed ? { unclaimed: { worker: 'wx', meta } } : {}) });
    case 'release':
      return store.release(id, token(o.worker, o.call));
    case 'renew':
      return store.renew(id, token(o.worker, o.call), 60_000);
    case 'retrying':
      return store.retrying(id, token(o.worker, o.call), 12345);
    case 'progress':
      return store.progress(id, token(o.worker, o.call), JSON.stringify({ fraction: 0.5, at: 1 }), 60_000);
    case 'cancel': {
      const reply = await store.cancel(id, 60_000);
      // Nobody subscribes in this test, on either store.
      return reply;
    }
    case 'markQueued':
      return store.markQueued(id, meta, 60_000);
    case 'status': {
      const { startedAt: _s, leaseUntil: _l, finishedAt: _f, ...status } = toCallStatus(id, await store.record(id), Date.now());
      return status;
    }
    case 'effectStart':
      return store.effectStart(id, o.name, `P${token(o.worker, o.call)}`, 60_000);
    case 'effectComplete':
      return store.effectComplete(id, o.name, `"${o.worker}"`, 60_000);
    case 'effectForget':
      return store.effectForget(id, o.name, `P${token(o.worker, o.call)}`);
  }
}

it('gives the same replies and records as the Lua scripts, for any sequence of operations', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 25 }), async (ops) => {
      const ids = [0, 1, 2].map(() => uniqueName('c'));
      const memory = connectMemory(new MemoryInflightStore());
      for (const o of ops) {
        const [fromRedis, fromMemory] = [await apply(redis, ids, o), await apply(memory, ids, o)];
        expect({ op: o, reply: fromMemory }).toEqual({ op: o, reply: fromRedis });
      }
      for (const c of [0, 1, 2]) expect(await apply(memory, ids, { op: 'status', call: c })).toEqual(await apply(redis, ids, { op: 'status', call: c }));
      await memory.close();
    }),
    { numRuns: 400 },
  );
}, 60_000);
