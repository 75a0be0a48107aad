import { RpcConnectionLostError, RpcNoRouteError, RpcReplyQueueLostError, RpcTimeoutError, type JsonValue } from '@warren/jsonrpc';
import { connectClient } from '@warren/amqp';
import { World, useWorld, gate, rejection, settleTicks, until } from './world';

let w: World;
useWorld((made) => (w = made));

describe('batches and notifications', () => {
  it('answers a batch per item in request order, notifications inside fulfilled with undefined', async () => {
    const heard: JsonValue[] = [];
    await w.service({ name: 'm', methods: { 'm.add': { handler: (p) => (p as number[]).reduce((a, b) => a + b, 0) } }, notifications: { 'm.log': { handler: (p) => void heard.push(p as JsonValue) } } });
    const client = await w.client();
    const results = await until(client.batch([{ method: 'm.add', params: [1, 1] }, { method: 'm.log', params: ['x'], notification: true }, { method: 'm.nope' }, { method: 'm.add', params: [2, 3] }]));
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    expect(results[0]).toEqual({ status: 'fulfilled', value: 2 });
    expect(results[1]).toEqual({ status: 'fulfilled', value: undefined });
    expect(results[2]).toMatchObject({ reason: expect.any(RpcNoRouteError) });
    expect(results[3]).toEqual({ status: 'fulfilled', value: 5 });
    await settleTicks();
    expect(heard).toEqual([['x']]);
  });

  it('gives every subscribing service each notification once, shared among its instances; per-instance ones reach every instance', async () => {
    const byService: Record<string, string[]> = { audit: [], mailer: [] };
    const byInstance = new Map<string, number>();
    for (const name of Object.keys(byService)) {
      for (const instanceId of ['i1', 'i2']) {
        await w.service({
          name, instanceId,
          notifications: { 'user.created': { handler: (p) => void byService[name]?.push(String((p as string[])[0])) } },
          instanceNotifications: { 'cache.flush': { handler: () => void byInstance.set(`${name}/${instanceId}`, (byInstance.get(`${name}/${instanceId}`) ?? 0) + 1) } },
        });
      }
    }
    const client = await w.client();
    for (let i = 0; i < 20; i++) await until(client.notify('user.created', [`u${i}`]));
    await until(client.notify('cache.flush'));
    await until(client.notify('nobody.subscribes', [1]));
    await settleTicks();
    expect(byService['audit']?.sort()).toEqual(Array.from({ length: 20 }, (_, i) => `u${i}`).sort());
    expect(byService['mailer']?.sort()).toEqual(byService['audit']);
    expect([...byInstance.values()]).toEqual([1, 1, 1, 1]);
  });

  it('spreads calls over the instances of a service within their prefetch', async () => {
    const counts = new Map<string, number>();
    for (const instanceId of ['a', 'b', 'c']) {
      await w.service({ name: 'pool', instanceId, prefetch: 2, methods: { work: { handler: async () => (counts.set(instanceId, (counts.get(instanceId) ?? 0) + 1), await new Promise((r) => setTimeout(r, 2)), instanceId) } } });
    }
    const client = await w.client();
    const answers = await until(Promise.all(Array.from({ length: 90 }, () => client.call<string>('work'))));
    expect(answers).toHaveLength(90);
    expect([...counts.values()]).toEqual([30, 30, 30]);
  });

  it('fails a method nobody serves with RPC_NO_ROUTE (-32601) at once (the request comes back unroutable)', async () => {
    const client = await w.client();
    await expect(until(client.call('no.such', [], { timeoutMs: 60_000 }))).rejects.toMatchObject({ constructor: RpcNoRouteError, code: 'RPC_NO_ROUTE', method: 'no.such' });
    expect(client.stats().returned).toBe(1);
  });
});

describe('late replies', () => {
  it('counts a reply that arrives after the caller gave up, and drops it', async () => {
    await w.service({ name: 'late', methods: { 'late.ignore': { handler: () => new Promise((r) => setTimeout(() => r('too late'), 1000)) } } });
    const client = await w.client();
    const call = rejection(client.call('late.ignore', [], { timeoutMs: 500 }));
    await jest.advanceTimersByTimeAsync(600);
    expect(await call).toBeInstanceOf(RpcTimeoutError);
    await settleTicks();
    expect(client.stats()).toMatchObject({ pending: 0, lateReplies: 1 });
  });
});

describe('reply queue modes', () => {
  for (const replyMode of ['named', 'direct'] as const) {
    it(`serves calls with ${replyMode} replies`, async () => {
      await w.service({ name: 'echo', methods: { 'echo.it': { handler: (p) => p as JsonValue } } });
      const client = await w.client({ replyMode });
      await expect(until(client.call('echo.it', ['a']))).resolves.toEqual(['a']);
      expect(client.replyQueue).toBe(replyMode === 'direct' ? 'amq.rabbitmq.reply-to' : `warren.reply.${client.id}`);
    });
  }

  it('named: recovers pending calls through the reply queue after the client connection is lost', async () => {
    const release = gate();
    await w.service({ name: 'steady', methods: { 'steady.slow': { handler: async (p) => (await release.promise, p as JsonValue) } } });
    const connection = w.bus.connect();
    const client = await connectClient({ connection, defaultTimeoutMs: 60_000 });
    const calls = Promise.all(Array.from({ length: 5 }, (_, i) => client.call('steady.slow', [i])));
    await settleTicks();
    await connection.simulateLoss();
    release.open();
    await expect(until(calls)).resolves.toEqual([[0], [1], [2], [3], [4]]);
    await until(client.close());
  });

  it('named: a reply queue that cannot be declared again (its home node down) is left for a new one; calls on the wire fail as reply_queue_lost, later ones are answered', async () => {
    const release = gate();
    await w.service({ name: 'steady', methods: { 'steady.slow': { handler: async (p) => (await release.promise, p as JsonValue) } } });
    const connection = w.bus.connect();
    const client = await connectClient({ connection, defaultTimeoutMs: 60_000 });
    const before = client.replyQueue;
    const onWire = rejection(client.call('steady.slow', [1]));
    await settleTicks();
    const down = w.bus.takeQueueDown(before);
    await connection.simulateLoss();
    expect(await until(onWire)).toBeInstanceOf(RpcReplyQueueLostError);
    release.open();
    await expect(until(client.call('steady.slow', [2]))).resolves.toEqual([2]);
    expect(client.replyQueue).not.toBe(before);
    expect(client.replyQueue.startsWith(before.slice(0, -12))).toBe(true);
    down.up();
    await until(client.close());
  });

  it('direct: fails pending calls at once with RPC_CONNECTION_LOST (-32007) when the connection goes, then works again', async () => {
    await w.service({ name: 'steady', methods: { 'steady.slow': { handler: () => new Promise((r) => setTimeout(() => r('ok'), 300)) } } });
    const connection = w.bus.connect();
    const client = await connectClient({ connection, replyMode: 'direct', defaultTimeoutMs: 60_000 });
    const call = rejection(client.call('steady.slow'));
    await settleTicks();
    await connection.simulateLoss();
    expect(await call).toBeInstanceOf(RpcConnectionLostError);
    await expect(until(client.call('steady.slow'))).resolves.toBe('ok');
    await until(client.close());
  });

  it('holds calls made while disconnected and sends them on reconnect', async () => {
    await w.service({ name: 'buffered', methods: { 'buffered.echo': { handler: (p) => p as JsonValue } } });
    const connection = w.bus.connect();
    const client = await connectClient({ connection });
    await connection.simulateLoss();
    const during = client.call('buffered.echo', ['held'], { timeoutMs: 10_000 });
    expect(client.stats().buffered).toBe(1);
    await expect(until(during)).resolves.toEqual(['held']);
    await until(client.close());
  });
});
