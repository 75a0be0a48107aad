import { EventEmitter } from 'node:events';
import { Teardown, amqpUrl, once, redisUrl, uniqueName, waitFor } from '@warren/testkit';

describe('Teardown', () => {
  it('runs steps in reverse order, all of them, then throws AggregateError', async () => {
    const td = new Teardown();
    const order: string[] = [];
    td.add(() => order.push('first'));
    td.add(async () => {
      order.push('second');
      throw new Error('boom-2');
    });
    td.add(() => {
      order.push('third');
      throw new Error('boom-3');
    });
    const error: unknown = await td.run().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(order).toEqual(['third', 'second', 'first']);
    expect(error).toBeInstanceOf(AggregateError);
    expect((error as AggregateError).errors.map((e: Error) => e.message)).toEqual(['boom-3', 'boom-2']);
  });

  it('is idempotent: a step never runs twice, even when run() is called concurrently', async () => {
    const td = new Teardown();
    let runs = 0;
    td.add(async () => {
      runs += 1;
    });
    await Promise.all([td.run(), td.run()]);
    await td.run();
    expect(runs).toBe(1);
    expect(td.size).toBe(0);
  });
});

describe('uniqueName', () => {
  it('is unique and safe for AMQP names and Redis keys', () => {
    const names = Array.from({ length: 1000 }, () => uniqueName('q'));
    expect(new Set(names).size).toBe(names.length);
    for (const name of names) expect(name).toMatch(/^q-[a-z0-9]+-[a-z0-9]+-[a-f0-9]{6}$/);
    expect(uniqueName()).toMatch(/^test-/);
  });
});

describe('env urls', () => {
  const saved = { amqp: process.env['AMQP_URL'], redis: process.env['REDIS_URL'] };
  afterEach(() => {
    for (const [key, value] of [['AMQP_URL', saved.amqp], ['REDIS_URL', saved.redis]] as const) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  });

  it('uses the environment, else the local defaults', () => {
    delete process.env['AMQP_URL'];
    delete process.env['REDIS_URL'];
    expect(amqpUrl()).toBe('amqp://guest:guest@127.0.0.1:5672');
    expect(redisUrl()).toBe('redis://127.0.0.1:6379');
    process.env['AMQP_URL'] = 'amqp://u:p@rabbit:5672/v';
    process.env['REDIS_URL'] = 'redis://redis:6379/1';
    expect(amqpUrl()).toBe('amqp://u:p@rabbit:5672/v');
    expect(redisUrl()).toBe('redis://redis:6379/1');
  });
});

describe('waitFor / once', () => {
  it('waitFor resolves when the predicate turns true and rejects clearly on timeout', async () => {
    let n = 0;
    await waitFor(() => ++n >= 3, { intervalMs: 1 });
    expect(n).toBe(3);
    await expect(waitFor(async () => false, { timeoutMs: 30, message: 'never' })).rejects.toThrow(
      'waitFor timed out after 30 ms: never',
    );
    const cause = new Error('not ready');
    await expect(
      waitFor(
        () => {
          throw cause;
        },
        { timeoutMs: 20 },
      ),
    ).rejects.toMatchObject({ cause });
  });

  it('once resolves with the event args, rejects on error and on timeout, and removes its listeners', async () => {
    const emitter = new EventEmitter();
    const got = once<[number, string]>(emitter, 'ready', 1000);
    emitter.emit('ready', 1, 'a');
    await expect(got).resolves.toEqual([1, 'a']);

    const failed = once(emitter, 'ready', 1000);
    emitter.emit('error', new Error('bad'));
    await expect(failed).rejects.toThrow('bad');

    await expect(once(emitter, 'never', 20)).rejects.toThrow("once: 'never' not emitted within 20 ms");
    expect(emitter.listenerCount('ready')).toBe(0);
    expect(emitter.listenerCount('never')).toBe(0);
    expect(emitter.listenerCount('error')).toBe(0);
  });

  it("once(…, 'close') is not failed by the 'error' that precedes it", async () => {
    const emitter = new EventEmitter();
    emitter.on('error', () => undefined);
    const closed = once(emitter, 'close', 1000);
    emitter.emit('error', new Error('reset'));
    emitter.emit('close', true);
    await expect(closed).resolves.toEqual([true]);
  });
});
