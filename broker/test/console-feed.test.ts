// The console's live feed without a network: one watcher however many
// browsers listen, bounded clients, slow ones dropped, outcomes from the
// gateway and from calls leaving the in-flight store.
import { EventEmitter } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Writable } from 'node:stream';
import { silentLogger } from '@warren/logger';
import type { CallGate, GatewayCall, SettledListener } from '../src/gateway-calls';
import { ConsoleFeed } from '../src/console/feed';
import { resolveConsoleOptions, type ConsoleOptions } from '../src/console/options';
import type { ClusterCall, InflightCallStatus, InflightSource } from '../src/inflight';
import type { LiveCatalogue } from '../src/live-catalogue';

/** A response that keeps what is written; `stalled` ones never drain, like a browser that stopped reading. */
class FakeResponse extends Writable {
  readonly frames: string[] = [];
  constructor(private readonly stalled = false) {
    super({ highWaterMark: 1024 });
  }
  override _write(chunk: Buffer, _enc: BufferEncoding, done: (err?: Error | null) => void): void {
    this.frames.push(chunk.toString());
    if (!this.stalled) done();
  }
  events(name: string): unknown[] {
    return this.frames.flatMap((f) => (f.startsWith(`event: ${name}\n`) ? [JSON.parse(f.split('\ndata: ')[1] as string) as unknown] : []));
  }
}

function setup(options: ConsoleOptions = {}, calls: ClusterCall[] = [], status?: (id: string) => Promise<InflightCallStatus>) {
  const settled = new Set<SettledListener>();
  const gate = {
    list: (): GatewayCall[] => [],
    onSettled: (l: SettledListener) => {
      settled.add(l);
      return () => settled.delete(l);
    },
  } as unknown as CallGate;
  const catalogue = { current: () => ({ services: [], methods: new Map([['add', { service: 'calculator' }], ['report.render', { service: 'jobs' }]]), tools: new Map(), conflicts: [] }) } as unknown as LiveCatalogue;
  const source = { list: jest.fn(async () => calls), ...(status ? { status: jest.fn(status) } : {}) } satisfies InflightSource;
  const feed = new ConsoleFeed({ gate, catalogue, inflight: source, logger: silentLogger() }, resolveConsoleOptions({ pollMs: 100, ...options }));
  const attach = (stalled = false): FakeResponse => {
    const response = new FakeResponse(stalled);
    feed.attach(new EventEmitter() as IncomingMessage, response as unknown as ServerResponse);
    return response;
  };
  const settle = (call: GatewayCall, ms: number, code?: number): void => {
    for (const l of settled) l(call, ms, code);
  };
  return { feed, source, attach, settle };
}

beforeEach(() => jest.useFakeTimers());
afterEach(() => jest.useRealTimers());

test('one watcher reads the store once per tick, however many browsers listen', async () => {
  const { feed, source, attach } = setup();
  const browsers = [attach(), attach(), attach(), attach(), attach()];
  await jest.advanceTimersByTimeAsync(1000);
  // Ten ticks, plus at most one immediate snapshot per newcomer; five polls per tick would be 50.
  expect(source.list.mock.calls.length).toBeGreaterThanOrEqual(10);
  expect(source.list.mock.calls.length).toBeLessThanOrEqual(15);
  // Each browser gets the whole list once, then what changed every tick.
  for (const b of browsers) expect(b.events('inflight').length).toBe(1);
  for (const b of browsers) expect(b.events('inflight-delta').length).toBeGreaterThanOrEqual(9);
  feed.close();
});

test('the watcher stops when the last browser leaves', async () => {
  const { feed, source, attach } = setup();
  const b = attach();
  await jest.advanceTimersByTimeAsync(300);
  b.emit('close');
  const before = source.list.mock.calls.length;
  await jest.advanceTimersByTimeAsync(1000);
  expect(source.list.mock.calls.length).toBe(before);
  expect(feed.size).toBe(0);
  feed.close();
});

test('at most maxClients browsers; the feed has no room for one more', () => {
  const { feed, attach } = setup({ maxClients: 2 });
  attach();
  expect(feed.hasRoom()).toBe(true);
  attach();
  expect(feed.hasRoom()).toBe(false);
  feed.close();
  expect(feed.hasRoom()).toBe(false);
});

test('a browser that stops reading is dropped (its socket does not drain for stallMs); the others keep receiving', async () => {
  const calls = Array.from({ length: 20 }, (_, i): ClusterCall => ({ callId: `c.${i}`, method: 'add', service: 'calculator', startedAt: 0 }));
  const { feed, attach } = setup({ maxBufferedBytes: 4096, stallMs: 1000 }, calls);
  const slow = attach(true);
  const fast = attach();
  await jest.advanceTimersByTimeAsync(2000);
  expect(slow.destroyed).toBe(true);
  expect(feed.size).toBe(1);
  const received = fast.events('inflight-delta').length;
  await jest.advanceTimersByTimeAsync(500);
  expect(fast.events('inflight-delta').length).toBeGreaterThan(received);
  feed.close();
});

test('in-flight calls: the whole list to a newcomer, then only what changed (ages and leases left out), whatever the others had', async () => {
  const calls: ClusterCall[] = [
    { callId: 'c.1', method: 'add', service: 'calculator', startedAt: 1, ageMs: 5, leaseUntil: 10 },
    { callId: 'c.2', method: 'add', service: 'calculator', startedAt: 2, ageMs: 4, leaseUntil: 10 },
  ];
  const { feed, source, attach } = setup({}, calls);
  const first = attach();
  await jest.advanceTimersByTimeAsync(50);
  expect(first.events('inflight')).toEqual([expect.objectContaining({ calls: [{ callId: 'c.1', method: 'add', service: 'calculator', startedAt: 1 }, { callId: 'c.2', method: 'add', service: 'calculator', startedAt: 2 }], gateway: [] })]);
  // A tick where only ages and leases moved sends nothing about the calls.
  source.list.mockResolvedValue(calls.map((c) => ({ ...c, ageMs: 99, leaseUntil: 99 })));
  await jest.advanceTimersByTimeAsync(100);
  expect(first.events('inflight-delta').at(-1)).toMatchObject({ calls: { upsert: [], remove: [] }, gateway: { upsert: [], remove: [] } });
  // c.1 ends, c.2 makes progress, c.3 starts.
  const now: ClusterCall[] = [{ callId: 'c.2', method: 'add', service: 'calculator', startedAt: 2, progress: { fraction: 0.5, at: 3 } }, { callId: 'c.3', method: 'add', startedAt: 3 }];
  source.list.mockResolvedValue(now);
  await jest.advanceTimersByTimeAsync(100);
  expect(first.events('inflight-delta').at(-1)).toMatchObject({ calls: { upsert: now, remove: ['c.1'] } });
  // A browser arriving now gets the whole list as it is, not the deltas it missed.
  const second = attach();
  await jest.advanceTimersByTimeAsync(50);
  expect(second.events('inflight')).toEqual([expect.objectContaining({ calls: now })]);
  expect(first.events('inflight').length).toBe(1);
  feed.close();
});

test('outcomes: a relayed call as the gateway saw it, and a call that left the store as its stored status says', async () => {
  const t0 = Date.now() - 2500;
  const calls: ClusterCall[] = [{ callId: 'w.1', method: 'report.render', service: 'jobs', worker: 'jobs-1', attempt: 2, startedAt: t0 }];
  const status = async (callId: string): Promise<InflightCallStatus> => ({ callId, state: 'failed', method: 'report.render', service: 'jobs', worker: 'jobs-1', attempt: 2, startedAt: t0, finishedAt: t0 + 2500, response: { error: { code: -32005 } } });
  const { feed, attach, settle } = setup({}, calls, status);
  const b = attach();
  await jest.advanceTimersByTimeAsync(150);
  settle({ callId: 'g.1', method: 'add', via: 'http', startedAt: 0 }, 12.34);
  settle({ callId: 'g.2', method: 'nope', via: 'http', startedAt: 0 }, 1, -32601);
  calls.length = 0;
  await jest.advanceTimersByTimeAsync(300);
  const items = b.events('outcomes').flatMap((e) => (e as { items: unknown[] }).items);
  expect(items).toEqual(expect.arrayContaining([
    expect.objectContaining({ callId: 'g.1', method: 'add', service: 'calculator', state: 'done', durationMs: 12.3, seenBy: 'gateway' }),
    expect.objectContaining({ callId: 'g.2', state: 'failed', code: -32601 }),
    expect.objectContaining({ callId: 'w.1', state: 'failed', code: -32005, worker: 'jobs-1', attempt: 2, durationMs: 2500, seenBy: 'watcher' }),
  ]));
  // Method names no service announced are one label in the throughput, as in the metrics.
  const throughput = b.events('throughput').at(-1) as { methods: { method: string }[] };
  expect(throughput.methods.map((m) => m.method).sort()).toEqual(['(unknown)', 'add', 'report.render']);
  // A browser connecting later gets the history at once.
  const late = attach();
  expect(late.events('outcomes')[0]).toMatchObject({ reset: true, items: expect.arrayContaining([expect.objectContaining({ callId: 'g.1' })]) });
  feed.close();
});

test('close ends every stream', () => {
  const { feed, attach } = setup();
  const a = attach();
  const b = attach();
  feed.close();
  expect(a.writableEnded && b.writableEnded).toBe(true);
  expect(feed.size).toBe(0);
});
