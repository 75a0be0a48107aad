import { ErrorCode, RpcNoConsumersError, wireErrorOf } from '@warren/jsonrpc';
import { DeadLetterQueues, RetryableError, ServiceRegistry, guardAvailability, type Progress } from '@warren/amqp';
import { World, useWorld, rejection, until } from './world';

let w: World;
useWorld((made) => (w = made));

describe('discovery, availability, progress and dead letters over MemoryBroker', () => {
  it('discovers instances, and the availability gate fails a call at once with RPC_NO_CONSUMERS (-32002) for a service with no consumer', async () => {
    const s = await w.service({ name: 'calc', methods: { 'calc.add': { handler: (p) => (p as number[]).reduce((a, b) => a + b, 0) } } });
    const connection = w.bus.connect();
    const registry = await ServiceRegistry.start(connection);
    await until(registry.discovered(), 50);
    expect(registry.list().map((i) => i.service)).toEqual(['calc']);
    const client = await w.client();
    const guard = guardAvailability(client, connection, registry, { ttlMs: 0 });
    await expect(until(client.call('calc.add', [1, 2]))).resolves.toBe(3);
    await until(s.close());
    const err = await until(rejection(client.call('calc.add', [1, 2], { timeoutMs: 60_000 })));
    expect(err).toMatchObject({ constructor: RpcNoConsumersError, service: 'calc', method: 'calc.add', queued: 0 });
    expect(wireErrorOf(err)).toMatchObject({ code: ErrorCode.ServiceUnavailable, data: { reason: 'no_consumers', service: 'calc' } });
    guard.close();
    await until(registry.close());
    await until(connection.close());
  });

  it('pushes throttled progress to a caller that asked, before the answer', async () => {
    await w.service({
      name: 'long',
      methods: {
        'long.run': {
          handler: async (_p, ctx) => {
            for (let i = 1; i <= 4; i++) {
              ctx.progress(i / 4, `step ${i}`);
              await new Promise((r) => setTimeout(r, 100));
            }
            return 'done';
          },
        },
      },
    });
    const client = await w.client();
    const seen: Progress[] = [];
    await expect(until(client.call('long.run', [], { onProgress: (p) => seen.push(p) }))).resolves.toBe('done');
    // The first at once, then at most one per 250 ms, the last always: 4 reports over 400 ms make 3.
    expect(seen.map((p) => p.message)).toEqual(['step 1', 'step 3', 'step 4']);
  });

  it('lists and replays a dead letter through DeadLetterQueues', async () => {
    let runs = 0;
    await w.service({ name: 'strict', methods: { 'strict.run': { retry: { attempts: 2, backoffMs: 10 }, handler: () => { runs++; throw new RetryableError('bad'); } } } });
    const client = await w.client();
    await until(rejection(client.call('strict.run', ['x'], { timeoutMs: 60_000 })));
    expect(runs).toBe(2);
    const queues = new DeadLetterQueues(w.bus.connect());
    expect(await until(queues.count('strict'))).toBe(1);
    const letters = await until(queues.list(['strict']));
    expect(letters.map((l) => [l.method, l.reason])).toEqual([['strict.run', 'retries_exhausted']]);
    const replayed = await until(queues.replay('strict', { timeoutMs: 60_000 }));
    expect(replayed.replayed).toBe(1);
    await until(new Promise((r) => setTimeout(r, 200)));
    expect(runs).toBe(4);
  });
});
