// One browser's feed stream (broker/src/console/feed-client.ts) over a socket the test drains by
// hand: a long list goes in frames of bounded size, the rest waits for 'drain' (a slow reader is
// never dropped), a call changed several times while the reader lagged is sent once as it is now,
// and a reader that stops for good is let go.
import type { ServerResponse } from 'node:http';
import { Writable } from 'node:stream';
import { FeedClient } from '../src/console/feed-client';
import type { KeyedChanges } from '../src/console/inflight-delta';

/** A socket whose writes complete only when the test says so (`drain()`): a browser reading slowly. */
class SlowResponse extends Writable {
  readonly frames: string[] = [];
  private held: Array<() => void> = [];
  constructor() {
    super({ highWaterMark: 1024 });
  }
  override _write(chunk: Buffer, _enc: BufferEncoding, done: (err?: Error | null) => void): void {
    this.frames.push(chunk.toString());
    this.held.push(() => done());
  }
  /** Lets everything written so far be read; resolves once the stream had its chance to write more. */
  async drain(): Promise<void> {
    const held = this.held;
    this.held = [];
    for (const done of held) done();
    await new Promise((resolve) => setImmediate(resolve));
  }
  parsed(): Array<{ event: string; data: { more?: boolean; calls: unknown } }> {
    return this.frames.map((f) => ({ event: f.slice(7, f.indexOf('\n')), data: JSON.parse(f.split('\ndata: ')[1] as string) as { more?: boolean; calls: unknown } }));
  }
}

const head = { at: 1, configured: true };
const none: KeyedChanges = { upsert: [], remove: [] };
const call = (i: number, fraction = 0): readonly [string, string] => [`c.${i}`, JSON.stringify({ callId: `c.${i}`, method: 'hold', service: 'bulk', startedAt: i, progress: { fraction, at: 0 } })];
const upserts = (n: number): KeyedChanges => ({ upsert: Array.from({ length: n }, (_, i) => call(i)), remove: [] });

function client(response: SlowResponse, stallMs = 60_000): FeedClient {
  return new FeedClient(response as unknown as ServerResponse, { maxBufferedBytes: 8192, stallMs, chunkBytes: 4096 });
}

test('a long list goes in frames of bounded size, one per drain, and the reader gets every call', async () => {
  const response = new SlowResponse();
  const feed = client(response);
  expect(feed.queueInflight(head, upserts(500), none)).toBe(true);
  // One frame, then nothing until the reader drains it.
  expect(response.frames).toHaveLength(1);
  const first = response.parsed()[0];
  expect(first).toMatchObject({ event: 'inflight', data: { more: true } });
  for (let i = 0; i < 100 && response.parsed().at(-1)?.data.more === true; i++) await response.drain();
  const frames = response.parsed();
  expect(frames.length).toBeGreaterThan(5);
  expect(Math.max(...response.frames.map((f) => f.length))).toBeLessThan(4096 + 200);
  expect(frames.slice(1).every((f) => f.event === 'inflight-delta')).toBe(true);
  expect(frames.at(-1)?.data.more).toBeUndefined();
  const ids = [...(first?.data.calls as Array<{ callId: string }>), ...frames.slice(1).flatMap((f) => (f.data.calls as { upsert: Array<{ callId: string }> }).upsert)].map((c) => c.callId);
  expect(new Set(ids).size).toBe(500);
  expect(ids).toHaveLength(500);
  expect(response.destroyed).toBe(false);
});

test('a call whose progress moved several times while the reader lagged is sent once, as it is now', async () => {
  const response = new SlowResponse();
  const feed = client(response);
  feed.queueInflight(head, upserts(200), none);
  // Three ticks while the reader is still on the first frame: c.150's progress moves each time, c.7 ends.
  feed.queueInflight({ ...head, at: 2 }, { upsert: [call(150, 0.1)], remove: [] }, none);
  feed.queueInflight({ ...head, at: 3 }, { upsert: [call(150, 0.2)], remove: ['c.7'] }, none);
  feed.queueInflight({ ...head, at: 4 }, { upsert: [call(150, 0.3)], remove: [] }, none);
  expect(response.frames).toHaveLength(1);
  for (let i = 0; i < 100 && response.parsed().at(-1)?.data.more === true; i++) await response.drain();
  const deltas = response.parsed().slice(1).map((f) => f.data.calls as { upsert: Array<{ callId: string; progress: { fraction: number } }>; remove: string[] });
  const sent150 = [...(response.parsed()[0]?.data.calls as Array<{ callId: string }>), ...deltas.flatMap((d) => d.upsert)].filter((c) => c.callId === 'c.150');
  expect(sent150).toEqual([expect.objectContaining({ progress: expect.objectContaining({ fraction: 0.3 }) })]);
  expect(deltas.flatMap((d) => d.remove)).toEqual(['c.7']);
  expect(response.parsed().at(-1)?.data).toMatchObject({ at: 4 });
});

test('a tick with nothing new still tells the reader the feed is live (an empty delta)', async () => {
  const response = new SlowResponse();
  const feed = client(response);
  feed.queueInflight(head, upserts(2), none);
  await response.drain();
  feed.queueInflight({ ...head, at: 2 }, none, none);
  expect(response.parsed().at(-1)).toEqual({ event: 'inflight-delta', data: { ...head, at: 2, calls: none, gateway: none } });
});

test('a reader whose socket does not drain for stallMs is let go', async () => {
  jest.useFakeTimers({ doNotFake: ['setImmediate'] });
  try {
    const response = new SlowResponse();
    const feed = client(response, 1000);
    feed.queueInflight(head, upserts(500), none);
    jest.setSystemTime(Date.now() + 500);
    expect(feed.queueInflight(head, none, none)).toBe(true);
    jest.setSystemTime(Date.now() + 1000);
    expect(feed.queueInflight(head, none, none)).toBe(false);
    expect(response.destroyed).toBe(true);
  } finally {
    jest.useRealTimers();
  }
});
