import { DeadlineExceededError, ErrorCode, RpcTimeoutError, wireErrorOf } from '@warren/jsonrpc';
import { World, useWorld, gate, rejection, settleTicks, until } from './world';

let w: World;
useWorld((made) => (w = made));

describe('deadlines, caller side', () => {
  it('fails a call nobody serves at its deadline with RPC_TIMEOUT (-32001), and the request expires in the queue unrun', async () => {
    let runs = 0;
    const s = await w.service({ name: 'offline', methods: { 'offline.run': { handler: () => ++runs } } });
    await until(s.close()); // the queue stays bound; nobody consumes it
    const client = await w.client();
    const call = rejection(client.call('offline.run', [], { timeoutMs: 300 }));
    await jest.advanceTimersByTimeAsync(299);
    expect(client.stats().pending).toBe(1);
    await jest.advanceTimersByTimeAsync(2);
    expect(await call).toMatchObject({ constructor: RpcTimeoutError, code: 'RPC_TIMEOUT', noTimeLeft: false });
    await jest.advanceTimersByTimeAsync(10);
    expect(w.bus.queue('warren.svc.offline')?.messageCount).toBe(0);
    const again = await w.service({ name: 'offline', methods: { 'offline.run': { handler: () => ++runs }, 'offline.ping': { handler: () => 'pong' } } });
    await expect(until(client.call('offline.ping'))).resolves.toBe('pong');
    expect(runs).toBe(0);
    expect(again.stats().answered).toBe(1);
  });

  it('refuses a call whose inherited deadline has passed, without publishing it', async () => {
    const client = await w.client();
    const err = await rejection(client.call('x', [], { deadline: Date.now() - 1 }));
    expect(err).toMatchObject({ constructor: RpcTimeoutError, noTimeLeft: true });
    expect(wireErrorOf(err)?.toErrorObject()).toMatchObject({ code: -32001, data: { reason: 'no_time_left' } });
    expect(client.stats().onWire).toBe(0);
  });
});

describe('deadlines, worker side', () => {
  it('aborts the handler at the deadline and answers -32001', async () => {
    let aborted: unknown;
    await w.service({
      name: 'slow',
      methods: {
        'slow.sleep': {
          handler: (_p, ctx) =>
            new Promise((resolve, reject) => {
              const t = setTimeout(() => resolve('slept'), 5000);
              ctx.signal.addEventListener('abort', () => {
                clearTimeout(t);
                aborted = ctx.signal.reason;
                reject(ctx.signal.reason);
              });
            }),
        },
      },
    });
    const client = await w.client();
    const err = await until(rejection(client.call('slow.sleep', [], { timeoutMs: 300 })));
    // The caller's own timer (RpcTimeoutError) and the worker's answer (DeadlineExceededError) fall due together: either is -32001.
    expect(wireErrorOf(err)?.code).toBe(ErrorCode.DeadlineExceeded);
    await settleTicks();
    expect(aborted).toBeInstanceOf(DeadlineExceededError);
  });

  it('does not run a request delivered after its deadline header (a clock-skewed caller), and answers -32001', async () => {
    const started = gate();
    let runs = 0;
    await w.service({ name: 'busy', prefetch: 1, methods: { 'busy.block': { handler: () => started.promise.then(() => 'done') }, 'busy.count': { handler: () => ++runs } } });
    const client = await w.client();
    const blocker = client.call('busy.block', [], { timeoutMs: 60_000 });
    await settleTicks();
    // Queued behind the blocker past its deadline; RabbitMQ's per-message expiry is on the queue head, the worker checks too.
    const late = rejection(client.call('busy.count', [], { timeoutMs: 100 }));
    await jest.advanceTimersByTimeAsync(150);
    expect(wireErrorOf(await late)?.code).toBe(ErrorCode.DeadlineExceeded);
    started.open();
    await expect(until(blocker)).resolves.toBe('done');
    await expect(until(client.call('busy.count'))).resolves.toBe(1);
  });

  it('lets nested calls inherit the remaining deadline', async () => {
    let seen = 0;
    await w.service({ name: 'inner', methods: { 'inner.deadline': { handler: (_p, ctx) => (seen = ctx.deadline) } } });
    await w.service({ name: 'outer', methods: { 'outer.call': { handler: (_p, ctx) => ctx.client.call('inner.deadline', [], { timeoutMs: 60_000 }) } } });
    const client = await w.client();
    const deadline = Date.now() + 1000;
    await until(client.call('outer.call', [], { timeoutMs: 1000 }));
    expect(seen).toBe(deadline);
  });
});
