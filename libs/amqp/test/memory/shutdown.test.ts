import { ErrorCode, RpcShuttingDownError, wireErrorOf } from '@warren/jsonrpc';
import { World, useWorld, gate, rejection, settleTicks, until } from './world';

let w: World;
useWorld((made) => (w = made));

describe('service shutdown', () => {
  it('lets a running handler finish and answer before closing, and takes no new work meanwhile', async () => {
    const release = gate();
    const started = gate();
    const s = await w.service({ name: 'drain', methods: { 'drain.wait': { handler: async () => (started.open(), await release.promise, 'finished') } } });
    const client = await w.client();
    const call = client.call('drain.wait', [], { timeoutMs: 60_000 });
    await until(started.promise);
    const closing = s.close();
    await settleTicks();
    // Draining: the consumer is cancelled, so a new request waits in the queue for the next instance.
    const next = client.call('drain.wait', [], { timeoutMs: 60_000 });
    await settleTicks();
    expect(w.bus.queue('warren.svc.drain')).toMatchObject({ messageCount: 1, consumerCount: 0 });
    release.open();
    await expect(until(call)).resolves.toBe('finished');
    await until(closing);
    const successor = await w.service({ name: 'drain', methods: { 'drain.wait': { handler: () => 'by the successor' } } });
    await expect(until(next)).resolves.toBe('by the successor');
    expect(successor.stats().answered).toBe(1);
  });

  it('aborts a handler still running after shutdownGraceMs and requeues its request for another instance', async () => {
    const started = gate();
    let runs = 0;
    const s = await w.service({
      name: 'stuck', shutdownGraceMs: 1000,
      methods: { 'stuck.run': { handler: (_p, ctx) => new Promise((_r, reject) => (runs++, started.open(), ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason)))) } },
    });
    const client = await w.client();
    const call = client.call('stuck.run', [], { timeoutMs: 60_000 });
    await until(started.promise);
    const closing = s.close();
    await jest.advanceTimersByTimeAsync(999);
    expect(runs).toBe(1);
    await until(closing);
    expect(w.bus.queue('warren.svc.stuck')?.messageCount).toBe(1);
    await w.service({ name: 'stuck', methods: { 'stuck.run': { handler: (_p, ctx) => `attempt ${ctx.attempt}` } } });
    await expect(until(call)).resolves.toBe('attempt 2');
  });
});

describe('client shutdown', () => {
  it('waits (bounded) for pending calls, then fails the rest with RPC_SHUTTING_DOWN (-32008) and deletes its reply queue', async () => {
    const slow = gate();
    await w.service({ name: 'svc', methods: { 'svc.quick': { handler: () => 'quick' }, 'svc.never': { handler: () => slow.promise.then(() => 'too late') } } });
    const client = await w.client({ closeTimeoutMs: 500 });
    const quick = client.call('svc.quick');
    const never = rejection(client.call('svc.never', [], { timeoutMs: 60_000 }));
    const closing = client.close();
    await expect(until(quick)).resolves.toBe('quick');
    await until(closing);
    const err = await never;
    expect(err).toMatchObject({ constructor: RpcShuttingDownError, code: 'RPC_SHUTTING_DOWN', retryable: true });
    expect(wireErrorOf(err)?.code).toBe(ErrorCode.ShuttingDown);
    expect(w.bus.queue(client.replyQueue)).toBeUndefined();
    await expect(client.call('svc.quick')).rejects.toBeInstanceOf(RpcShuttingDownError);
    slow.open();
  });
});
