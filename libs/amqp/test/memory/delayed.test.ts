import { RpcTimeoutError } from '@warren/jsonrpc';
import { maxDelayMs } from '../../src/wire/delay';
import { World, useWorld, rejection, settleTicks, until } from './world';

let w: World;
useWorld((made) => (w = made));

/** A service recording when each call and notification started, on the fake clock. */
async function recorder(): Promise<{ calls: number[]; events: number[] }> {
  const seen = { calls: [] as number[], events: [] as number[] };
  await w.service({
    name: 'later',
    methods: { 'later.run': { handler: () => seen.calls.push(Date.now()) } },
    notifications: { 'later.job': { handler: () => void seen.events.push(Date.now()) } },
  });
  return seen;
}

describe('delayed calls over the in-memory broker', () => {
  it('starts a delayed call when it is due, never before, with its deadline counted from then', async () => {
    const seen = await recorder();
    const client = await w.client();
    const sent = Date.now();
    const answer = client.call('later.run', [], { delayMs: 10_000, timeoutMs: 1000 });
    await jest.advanceTimersByTimeAsync(9_990);
    expect(seen.calls).toEqual([]);
    await until(answer);
    expect(seen.calls).toHaveLength(1);
    expect((seen.calls[0] as number) - sent).toBeGreaterThanOrEqual(10_000);
    expect((seen.calls[0] as number) - sent).toBeLessThan(10_000 + 200);
  });

  it('delivers a delayed notification when due (notBefore as a Date)', async () => {
    const seen = await recorder();
    const client = await w.client();
    const due = Date.now() + 3_333;
    await until(client.notify('later.job', {}, { notBefore: new Date(due) }));
    await jest.advanceTimersByTimeAsync(3_300);
    expect(seen.events).toEqual([]);
    await jest.advanceTimersByTimeAsync(200);
    expect(seen.events).toHaveLength(1);
    expect(seen.events[0]).toBeGreaterThanOrEqual(due);
  });

  it('keeps waits of many lengths in due order (each level is FIFO)', async () => {
    const order: number[] = [];
    await w.service({ name: 'ord', notifications: { 'ord.n': { handler: (p) => void order.push((p as number[])[0] as number) } } });
    const client = await w.client();
    const delays = [7_000, 1_000, 4_097, 123, 4_096, 2_500, 65_537, 65_536];
    await until(Promise.all(delays.map((d) => client.notify('ord.n', [d], { delayMs: d }))));
    await jest.advanceTimersByTimeAsync(70_000);
    await settleTicks();
    expect(order).toEqual([...delays].sort((a, b) => a - b));
  });

  it('waits out a delay longer than one Node timer (25 days) without firing the caller\'s timeout early', async () => {
    const client = await w.client();
    const call = rejection(client.call('nobody.serves', [], { delayMs: 25 * 24 * 3_600_000, timeoutMs: 1000 }));
    await jest.advanceTimersByTimeAsync(24 * 24 * 3_600_000);
    expect(client.stats().pending).toBe(1);
    await jest.advanceTimersByTimeAsync(2 * 24 * 3_600_000);
    expect(await call).toBeInstanceOf(RpcTimeoutError);
  });

  it('a caller that aborts a call delayed past the 60 s a cancel is otherwise remembered: it never runs', async () => {
    const seen = await recorder();
    const client = await w.client();
    const ac = new AbortController();
    const call = rejection(client.call('later.run', [], { delayMs: 90_000, timeoutMs: 1000, signal: ac.signal }));
    await jest.advanceTimersByTimeAsync(1000);
    ac.abort();
    expect(await call).toMatchObject({ code: 'RPC_ABORTED' });
    await jest.advanceTimersByTimeAsync(100_000);
    expect(seen.calls).toEqual([]);
  });

  it('refuses a bad delay at once, and a deadline before the due time', async () => {
    const client = await w.client();
    await expect(client.call('later.run', [], { delayMs: maxDelayMs + 1 })).rejects.toThrow(RangeError);
    await expect(client.notify('later.job', {}, { delayMs: -5 })).rejects.toThrow(RangeError);
    await expect(client.call('later.run', [], { delayMs: 5000, deadline: Date.now() + 1000 })).rejects.toThrow(RpcTimeoutError);
    expect(client.stats().pending).toBe(0);
  });
});
