import path from 'node:path';
import { connectClient, startService, type HandlerContext, type RpcClient, type ServiceOptions, type WarrenService } from '@warren/amqp';
import { AmqpConnection } from '@warren/amqp-transport';
import type { SentCall } from '../src/engine/call-options';
import {
  ErrorCode, InvalidParamsError, RpcAbortedError, RpcConnectionLostError, RpcInvalidMethodError, RpcNoRouteError, RpcTimeoutError, wireErrorOf, type JsonValue,
} from '@warren/jsonrpc';
import { Teardown, amqpUrl, spawnTs, waitFor } from '@warren/testkit';
import { TestNamespace, publishRaw, queueDepth } from '../../../test/support/amqp';

const td = new Teardown();
const ns = new TestNamespace();
const urls = amqpUrl();
let client: RpcClient;

async function service(options: Omit<ServiceOptions, 'namespace'>): Promise<WarrenService> {
  const s = await startService({ urls, namespace: ns.namespace, ...options, name: ns.service(options.name) });
  td.add(() => s.close());
  return s;
}

beforeAll(async () => {
  td.add(() => ns.destroy());
  client = await connectClient({ urls, namespace: ns.namespace, defaultTimeoutMs: 5000 });
  td.add(() => client.close());
});
afterAll(() => td.run());

describe('calls', () => {
  const seen: HandlerContext[] = [];
  beforeAll(async () => {
    await service({
      name: 'math',
      methods: {
        'math.add': { params: { type: 'array', items: { type: 'number' } }, handler: (p) => (p as number[]).reduce((a, b) => a + b, 0) },
        'math.ctx': {
          handler: (_p, ctx) => {
            seen.push(ctx);
            return { attempt: ctx.attempt, method: ctx.method, id: ctx.id ?? null, traceparent: ctx.traceparent };
          },
        },
        'tools/call': { handler: (p) => p as JsonValue },
        'math.big': { handler: () => BigInt(1) as unknown as JsonValue },
        'math.nested': { handler: (_p, ctx) => ctx.client.call('math.ctx', []) },
        'math.sleep': {
          handler: (p, ctx) =>
            new Promise((resolve, reject) => {
              const t = setTimeout(() => resolve('slept'), (p as number[])[0]);
              ctx.signal.addEventListener('abort', () => (clearTimeout(t), reject(ctx.signal.reason)));
            }),
        },
      },
    });
  });

  it('calls methods whose names contain dots and slashes', async () => {
    await expect(client.call('math.add', [1, 2, 3])).resolves.toBe(6);
    await expect(client.call('tools/call', { a: 1 })).resolves.toEqual({ a: 1 });
  });

  it('validates params by JSON Schema with -32602 and details', async () => {
    const err = await client.call('math.add', ['x']).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidParamsError);
    expect(err).toMatchObject({ code: ErrorCode.InvalidParams, data: [expect.objectContaining({ path: '/0' })] });
  });

  it('answers an unknown method with -32601 at once, not at the deadline', async () => {
    // Once RabbitMQ returns it and the announcements heard (about 0.7 s the first time: discovery/returned-requests.ts) name no service for it.
    await expect(client.call('no.such.method', [], { timeoutMs: 10_000 })).rejects.toMatchObject({ constructor: RpcNoRouteError, method: 'no.such.method' });
  });

  it('turns an unserializable result into -32603 instead of losing the reply', async () => {
    await expect(client.call('math.big')).rejects.toMatchObject({ code: ErrorCode.InternalError });
  });

  it('keeps the caller-chosen id and hands handlers a full context', async () => {
    const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    const answer = await client.call<{ attempt: number; id: JsonValue; traceparent: string }>('math.ctx', [], { id: 'my-id', traceparent });
    expect(answer).toMatchObject({ attempt: 1, method: 'math.ctx', id: 'my-id' });
    expect(answer.traceparent).toMatch(/^00-0af7651916cd43dd8448eb211c80319c-[0-9a-f]{16}-01$/);
    const ctx = seen.at(-1);
    expect(ctx?.deadline).toBeGreaterThan(Date.now());
    expect(ctx?.signal.aborted).toBe(false);
  });

  it('tells the call id of the next call in advance, so a caller can cancel or look it up', async () => {
    const expected = client.nextCallId();
    await client.call('math.ctx', []);
    expect(seen.at(-1)?.callId).toBe(expected);
  });

  it('tells send listeners of each request (call id, method, id, deadline) as it is sent; a listener that throws fails nothing', async () => {
    const own = await connectClient({ urls, namespace: ns.namespace, defaultTimeoutMs: 5000 });
    td.add(() => own.close());
    const sent: SentCall[] = [];
    own.onSend(() => {
      throw new Error('listener bug');
    });
    own.onSend((c) => sent.push(c));
    const expected = own.nextCallId();
    const before = Date.now();
    await expect(own.call('math.add', [1, 2], { id: 'mine', timeoutMs: 3000 })).resolves.toBe(3);
    await expect(own.request({ jsonrpc: '2.0', method: 'math.add', params: [2, 2], id: 7 })).resolves.toMatchObject({ result: 4, id: 7 });
    await own.notify('no.one.listens', []);
    expect(sent).toHaveLength(2); // requests only: a notification is never answered, so never queued
    expect(sent[0]).toEqual({ callId: expected, method: 'math.add', id: 'mine', deadline: expect.any(Number) });
    expect(sent[0]!.deadline).toBeGreaterThanOrEqual(before + 3000);
    expect(sent[0]!.deadline).toBeLessThanOrEqual(Date.now() + 3000);
    expect(sent[1]).toMatchObject({ method: 'math.add', id: 7 });
  });

  it('lets nested calls inherit the deadline and the trace', async () => {
    const traceparent = '00-11111111111111111111111111111111-2222222222222222-01';
    const before = seen.length;
    await client.call('math.nested', [], { traceparent, timeoutMs: 4000 });
    const outer = Date.now() + 4000;
    const inner = seen[before];
    expect(inner?.traceparent.startsWith('00-11111111111111111111111111111111-')).toBe(true);
    expect(inner?.deadline).toBeLessThanOrEqual(outer);
  });

  it('fails at the deadline with -32001 and aborts the handler', async () => {
    // The caller's timer (RpcTimeoutError) or the worker's answer (DeadlineExceededError), whichever comes first: -32001 either way.
    await expect(client.call('math.sleep', [5000], { timeoutMs: 300 }).catch(wireErrorOf)).resolves.toMatchObject({ code: ErrorCode.DeadlineExceeded });
  });

  it('cancels through an AbortSignal', async () => {
    const ac = new AbortController();
    const call = client.call('math.sleep', [5000], { signal: ac.signal });
    setTimeout(() => ac.abort(), 50);
    await expect(call).rejects.toBeInstanceOf(RpcAbortedError);
    expect(client.stats().pending).toBe(0);
  });

  it('answers batches per item in request order; notifications inside produce fulfilled undefined', async () => {
    const results = await client.batch([
      { method: 'math.add', params: [1, 1] },
      { method: 'nobody.listens', notification: true },
      { method: 'missing' },
      { method: 'math.add', params: [2, 2] },
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    expect(results[0]).toEqual({ status: 'fulfilled', value: 2 });
    expect(results[3]).toEqual({ status: 'fulfilled', value: 4 });
  });

  it('offers a typed proxy', async () => {
    const math = client.proxy<{ add(a: number, b: number): number }>('math');
    await expect(math.add(20, 22)).resolves.toBe(42);
  });

  it('refuses method names that cannot be routing keys, without touching the broker', async () => {
    await expect(client.call('x'.repeat(300))).rejects.toBeInstanceOf(RpcInvalidMethodError);
    await expect(client.call('bad\u0000name')).rejects.toBeInstanceOf(RpcInvalidMethodError);
    await expect(client.call('math.add', [1, 1])).resolves.toBe(2);
  });
});

describe('worker pools and notifications', () => {
  it('spreads 300 calls over three instances of one service', async () => {
    const counts = new Map<string, number>();
    for (const instanceId of ['a', 'b', 'c']) {
      await service({
        name: 'pool',
        instanceId,
        prefetch: 4,
        methods: {
          work: {
            handler: async () => {
              counts.set(instanceId, (counts.get(instanceId) ?? 0) + 1);
              await new Promise((r) => setTimeout(r, 2));
              return instanceId;
            },
          },
        },
      });
    }
    const answers = await Promise.all(Array.from({ length: 300 }, () => client.call<string>('work')));
    expect(answers).toHaveLength(300);
    for (const id of ['a', 'b', 'c']) expect(counts.get(id) ?? 0).toBeGreaterThan(30);
    expect([...counts.values()].reduce((a, b) => a + b, 0)).toBe(300);
  });

  it('gives each subscribing service every notification, shared among its instances; per-instance subscriptions reach every instance', async () => {
    const byService = { audit: [] as string[], mailer: [] as string[] };
    const byInstance = new Map<string, number>();
    for (const [name, list] of Object.entries(byService)) {
      for (const instanceId of ['i1', 'i2']) {
        await service({
          name,
          instanceId,
          notifications: { 'user.created': { handler: (p) => void list.push(String((p as string[])[0])) } },
          instanceNotifications: { 'cache.flush': { handler: () => void byInstance.set(`${name}/${instanceId}`, (byInstance.get(`${name}/${instanceId}`) ?? 0) + 1) } },
        });
      }
    }
    for (let i = 0; i < 20; i++) await client.notify('user.created', [`u${i}`]);
    await client.notify('cache.flush');
    await client.notify('nobody.subscribes', [1]);
    await waitFor(() => byService.audit.length >= 20 && byService.mailer.length >= 20 && byInstance.size === 4);
    expect(byService.audit.sort()).toEqual(byService.mailer.sort());
    expect(new Set(byService.audit).size).toBe(20);
    expect([...byInstance.values()]).toEqual([1, 1, 1, 1]);
  });
});

describe('deadlines without a worker', () => {
  it('answers -32001 at the deadline and never runs the request later', async () => {
    let runs = 0;
    const handler = { handler: () => ++runs };
    const s = await service({ name: 'offline', methods: { 'offline.run': handler } });
    await s.close(); // the queue stays bound, nobody consumes
    await expect(client.call('offline.run', [], { timeoutMs: 300 })).rejects.toBeInstanceOf(RpcTimeoutError);
    // Give the message time to pass its expiration before a worker appears.
    await new Promise((r) => setTimeout(r, 100));
    const again = await service({ name: 'offline', methods: { 'offline.run': handler, 'offline.ping': { handler: () => 'pong' } } });
    await expect(client.call('offline.ping')).resolves.toBe('pong');
    expect(runs).toBe(0);
    expect(again.stats().answered).toBe(1);
  });
});

describe('hostile and foreign messages', () => {
  it('answers an invalid body with the JSON-RPC error and dead-letters it; the consumer keeps serving', async () => {
    const s = await service({ name: 'strict', methods: { 'strict.ok': { handler: () => 'ok' } } });
    const reply = await connectClient({ urls, namespace: ns.namespace });
    td.add(() => reply.close());
    await publishRaw(ns.names.requestExchange, 'strict.ok', Buffer.from('{not json'), { replyTo: ns.names.replyQueue(reply.id), correlationId: 'raw-1' });
    await publishRaw(ns.names.requestExchange, 'strict.ok', Buffer.from([0xff, 0xfe]), {});
    await publishRaw(ns.names.requestExchange, 'strict.ok', Buffer.from('{"jsonrpc":"2.0","method":"strict.ok","id":7}'), { headers: { 'x-warren-deadline': 'soon' } });
    await waitFor(async () => (await queueDepth(ns.names.deadLetterQueue('strict'))) === 2);
    expect(s.stats().deadLettered).toBe(2);
    await expect(client.call('strict.ok')).resolves.toBe('ok');
  });
});

describe('shutdown', () => {
  it('lets a running handler finish and answer before closing', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let started = false;
    const s = await service({ name: 'drain', methods: { 'drain.wait': { handler: async () => ((started = true), await gate, 'finished') } } });
    const call = client.call('drain.wait');
    await waitFor(() => started);
    const closing = s.close();
    setTimeout(release, 50);
    await expect(call).resolves.toBe('finished');
    await closing;
  });
});

describe('connection loss', () => {
  it('recovers pending calls through the named reply queue after the client connection is cut', async () => {
    const { FaultProxy } = await import('@warren/testkit');
    const proxy = await FaultProxy.forUrl(urls);
    td.add(() => proxy.close());
    await service({ name: 'steady', methods: { 'steady.slow': { handler: async (p) => (await new Promise((r) => setTimeout(r, 300)), p as JsonValue) } } });
    const cut = await connectClient({ urls: proxy.url(urls), namespace: ns.namespace, reconnect: { initialDelayMs: 50, maxDelayMs: 200 } });
    td.add(() => cut.close());
    const calls = Array.from({ length: 10 }, (_, i) => cut.call('steady.slow', [i]));
    await new Promise((r) => setTimeout(r, 100));
    proxy.cutAll();
    await expect(Promise.all(calls)).resolves.toEqual(Array.from({ length: 10 }, (_, i) => [i]));
    await expect(cut.call('steady.slow', ['after'])).resolves.toEqual(['after']);
    expect(cut.stats().pending).toBe(0);
  });

  it('fails pending calls fast in direct reply-to mode, then works again', async () => {
    const { FaultProxy } = await import('@warren/testkit');
    const proxy = await FaultProxy.forUrl(urls);
    td.add(() => proxy.close());
    await service({ name: 'steady2', methods: { 'steady2.slow': { handler: async () => (await new Promise((r) => setTimeout(r, 300)), 'ok') } } });
    const direct = await connectClient({ urls: proxy.url(urls), namespace: ns.namespace, replyMode: 'direct', reconnect: { initialDelayMs: 50, maxDelayMs: 200 } });
    td.add(() => direct.close());
    const call = direct.call('steady2.slow', [], { timeoutMs: 10_000 });
    await new Promise((r) => setTimeout(r, 100));
    const cutAt = Date.now();
    proxy.cutAll();
    await expect(call).rejects.toBeInstanceOf(RpcConnectionLostError);
    expect(Date.now() - cutAt).toBeLessThan(5000);
    await waitFor(async () => (await direct.call('steady2.slow').catch(() => 'not yet')) === 'ok', { timeoutMs: 10_000 });
  });

  it('buffers calls made while disconnected and sends them on reconnect', async () => {
    const connection = new AmqpConnection({ urls });
    await connection.start();
    td.add(() => connection.close());
    await service({ name: 'buffered', methods: { 'buffered.echo': { handler: (p) => p as JsonValue } } });
    const c = await connectClient({ connection, namespace: ns.namespace });
    td.add(() => c.close());
    await connection.simulateLoss();
    const during = c.call('buffered.echo', ['held'], { timeoutMs: 10_000 });
    await expect(during).resolves.toEqual(['held']);
  });
});

describe('killed worker', () => {
  it('redelivers a call whose worker died mid-handler to another instance', async () => {
    const name = ns.service('fragile');
    const fixture = path.join(__dirname, 'fixtures', 'slow-worker.ts');
    const victim = spawnTs(fixture, [ns.namespace, name, 'victim'], { AMQP_URL: urls });
    td.add(() => victim.kill('SIGKILL'));
    await victim.waitForLine(/^ready$/, 20_000);
    const call = client.call<string>('slow', [60_000], { timeoutMs: 15_000 });
    await victim.waitForLine(/^started /);
    const survivor = spawnTs(fixture, [ns.namespace, name, 'survivor'], { AMQP_URL: urls });
    td.add(() => survivor.kill('SIGKILL'));
    await survivor.waitForLine(/^ready$/, 20_000);
    await victim.kill('SIGKILL');
    await expect(call).resolves.toBe('survivor');
  }, 40_000);
});
