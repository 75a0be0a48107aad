// ctx.once over a ledger held in memory (the tracker's is Redis): a stored
// result is returned without running fn again; a run after one that died
// inside fn throws WorkerLostError (effect_interrupted) unless `recover`
// resolves it; a throwing fn is forgotten; untracked, fn runs every run but
// once per name within a run.
import { ErrorCode, JsonRpcError } from '@warren/jsonrpc';
import { silentLogger } from '@warren/logger';
import { CallAbort } from '../src/runtime/call-abort';
import type { RpcClient } from '../src/engine/client';
import { CallContext } from '../src/runtime/context';
import { effectKey, type EffectLedger, type EffectStart } from '../src/runtime/once';

/** One call's effects; each `run()` is a new run of the call (a new token), as after a takeover. */
class MemoryLedger {
  readonly values = new Map<string, string>();
  private runs = 0;

  run(): EffectLedger {
    const mark = `P${++this.runs}`;
    return {
      start: async (name): Promise<EffectStart> => {
        const v = this.values.get(name);
        if (v === undefined) this.values.set(name, mark);
        if (v === undefined || v === mark) return { kind: 'run' };
        return v.startsWith('D') ? { kind: 'done', json: v.slice(1) } : { kind: 'interrupted' };
      },
      complete: async (name, json) => {
        if (!this.values.get(name)?.startsWith('D')) this.values.set(name, `D${json}`);
      },
      forget: async (name) => {
        if (this.values.get(name) === mark) this.values.delete(name);
      },
    };
  }
}

const owner = { service: 'pay', instanceId: 'i1', log: silentLogger(), client: {} as RpcClient, progressSink: () => () => undefined };
const ctx = (effects: EffectLedger | undefined): CallContext =>
  new CallContext({ callId: 'c.1', method: 'charge', id: 1, deadline: Date.now() + 1000, attempt: 1, parentTrace: undefined, effects }, new CallAbort(), owner);

it('runs the effect once across runs of the call and hands later runs its stored result', async () => {
  const ledger = new MemoryLedger();
  const fn = jest.fn(async (key: string) => ({ charged: 5, key }));
  expect(await ctx(ledger.run()).once('charge', fn)).toEqual({ charged: 5, key: effectKey('c.1', 'charge') });
  expect(await ctx(ledger.run()).once('charge', fn)).toEqual({ charged: 5, key: 'c.1/charge' });
  expect(fn).toHaveBeenCalledTimes(1);
  // A result of nothing is stored as nothing.
  const mail = jest.fn(async () => undefined);
  await ctx(ledger.run()).once('mail', mail);
  await expect(ctx(ledger.run()).once('mail', mail)).resolves.toBeUndefined();
  expect(mail).toHaveBeenCalledTimes(1);
});

it('after a run that died inside fn, throws WorkerLostError (effect_interrupted) rather than run it again, unless recover resolves it', async () => {
  const ledger = new MemoryLedger();
  const dying = ledger.run();
  await dying.start('charge'); // marked started, never completed: its worker died
  const fn = jest.fn(async () => 1);
  const err = await ctx(ledger.run()).once('charge', fn).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(JsonRpcError);
  expect(err).toMatchObject({ code: ErrorCode.WorkerLost, data: { reason: 'effect_interrupted', effect: 'charge', key: 'c.1/charge' } });
  expect(fn).not.toHaveBeenCalled();

  const recover = jest.fn(async (key: string) => (key === 'c.1/charge' ? 7 : 0));
  expect(await ctx(ledger.run()).once('charge', fn, { recover })).toBe(7);
  // Recovered once, stored like fn's result.
  expect(await ctx(ledger.run()).once('charge', fn, { recover })).toBe(7);
  expect(recover).toHaveBeenCalledTimes(1);
  expect(fn).not.toHaveBeenCalled();
});

it('forgets an effect whose fn threw, so it may be tried again', async () => {
  const ledger = new MemoryLedger();
  const run = ctx(ledger.run());
  await expect(run.once('charge', async () => Promise.reject(new Error('card declined')))).rejects.toThrow('card declined');
  expect(ledger.values.has('charge')).toBe(false);
  expect(await run.once('charge', async () => 3)).toBe(3);
});

it('untracked: runs fn on every run of the call, once per name within a run', async () => {
  const fn = jest.fn(async () => 'sent');
  const run = ctx(undefined);
  await Promise.all([run.once('mail', fn), run.once('mail', fn)]);
  await ctx(undefined).once('mail', fn);
  expect(fn).toHaveBeenCalledTimes(2);
});

it('refuses an empty or overlong effect name with -32602', async () => {
  await expect(ctx(undefined).once('', async () => 1)).rejects.toMatchObject({ code: ErrorCode.InvalidParams });
  await expect(ctx(undefined).once('x'.repeat(201), async () => 1)).rejects.toMatchObject({ code: ErrorCode.InvalidParams });
});
