import { ErrorCode, RpcAbortedError } from '@warren/jsonrpc';
import type { HandlerContext } from '@warren/amqp';
import { World, useWorld, gate, rejection, settleTicks, until } from './world';

let w: World;
useWorld((made) => (w = made));

/** A handler that runs until its signal fires, recording why. */
function waitsForAbort(reasons: unknown[], started?: () => void) {
  return {
    handler: (_p: unknown, ctx: HandlerContext) =>
      new Promise((_resolve, reject) => {
        started?.();
        ctx.signal.addEventListener('abort', () => {
          reasons.push(ctx.signal.reason);
          reject(ctx.signal.reason);
        });
      }),
  };
}

describe('cancellation', () => {
  it('settles an aborted call with RPC_ABORTED (-32003) at once, and the wire cancel stops the handler where it runs', async () => {
    const reasons: unknown[] = [];
    const started = gate();
    await w.service({ name: 'job', methods: { 'job.run': waitsForAbort(reasons, () => started.open()) } });
    const client = await w.client();
    const cancelled: string[] = [];
    client.onCancel((id) => cancelled.push(id));
    const ac = new AbortController();
    const callId = client.nextCallId();
    const call = rejection(client.call('job.run', [], { signal: ac.signal, timeoutMs: 60_000 }));
    await until(started.promise);
    ac.abort();
    expect(await call).toMatchObject({ constructor: RpcAbortedError, code: 'RPC_ABORTED', retryable: false });
    expect(client.stats().pending).toBe(0);
    expect(cancelled).toEqual([callId]);
    await settleTicks();
    expect(reasons).toHaveLength(1);
    expect(reasons[0]).toMatchObject({ code: ErrorCode.Cancelled });
  });

  it('refuses a call whose signal is already aborted, without publishing it', async () => {
    const client = await w.client();
    const ac = new AbortController();
    ac.abort();
    await expect(client.call('job.run', [], { signal: ac.signal })).rejects.toBeInstanceOf(RpcAbortedError);
    expect(client.stats().onWire).toBe(0);
  });

  it('cancelOnWire from another client stops a running call; its caller gets -32003', async () => {
    const reasons: unknown[] = [];
    const started = gate();
    await w.service({ name: 'job', methods: { 'job.run': waitsForAbort(reasons, () => started.open()) } });
    const caller = await w.client();
    const operator = await w.client();
    const callId = caller.nextCallId();
    const call = rejection(caller.call('job.run', [], { timeoutMs: 60_000 }));
    await until(started.promise);
    await until(operator.cancelOnWire(callId, 'operator'));
    expect(await until(call)).toMatchObject({ code: ErrorCode.Cancelled });
    expect(reasons).toHaveLength(1);
  });

  it('answers -32003 without running a call cancelled before any worker took it', async () => {
    let runs = 0;
    const blocker = gate();
    await w.service({ name: 'one', prefetch: 1, methods: { 'one.block': { handler: () => blocker.promise.then(() => 'unblocked') }, 'one.count': { handler: () => ++runs } } });
    const caller = await w.client();
    const first = caller.call('one.block', [], { timeoutMs: 60_000 });
    await settleTicks();
    const queuedId = caller.nextCallId();
    const queued = rejection(caller.call('one.count', [], { timeoutMs: 60_000 }));
    await settleTicks();
    await until(caller.cancelOnWire(queuedId, 'changed my mind'));
    blocker.open();
    await expect(until(first)).resolves.toBe('unblocked');
    expect(await until(queued)).toMatchObject({ code: ErrorCode.Cancelled });
    expect(runs).toBe(0);
  });
});
