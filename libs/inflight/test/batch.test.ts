import { Batcher } from '../src/batch';

it('sends what is pushed within one tick as one batch, and answers each push with its own reply', async () => {
  const sent: number[][] = [];
  const batch = new Batcher<number, string>(async (items) => {
    sent.push([...items]);
    return items.map((i) => `r${i}`);
  }, 4);
  const first = await Promise.all([1, 2, 3].map((i) => batch.push(i)));
  expect(first).toEqual(['r1', 'r2', 'r3']);
  const second = await Promise.all([4, 5, 6, 7, 8, 9].map((i) => batch.push(i)));
  expect(second).toEqual(['r4', 'r5', 'r6', 'r7', 'r8', 'r9']);
  expect(sent).toEqual([[1, 2, 3], [4, 5, 6, 7], [8, 9]]); // at most `max` per batch
});

it('fails every push of a batch whose send failed, and only those', async () => {
  let calls = 0;
  const batch = new Batcher<number, number>(async (items) => {
    if (++calls === 1) throw new Error('down');
    return items;
  }, 8);
  const failed = [batch.push(1), batch.push(2)].map((p) => p.then(() => 'ok', (e: Error) => e.message));
  expect(await Promise.all(failed)).toEqual(['down', 'down']);
  await expect(batch.push(3)).resolves.toBe(3);
});

it('fails pushes a short reply has no item for', async () => {
  const batch = new Batcher<number, number>(async () => [1], 8);
  const results = await Promise.allSettled([batch.push(1), batch.push(2)]);
  expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected']);
});

it('refuses a batch size below one', () => {
  expect(() => new Batcher(async () => [], 0)).toThrow(RangeError);
});

it("with the 'turn' window, sends after the ticks of the loop's turn, so what they write goes first", async () => {
  const order: string[] = [];
  const batch = new Batcher<number, number>(async (items) => {
    order.push(`batch ${items.join(',')}`);
    return items;
  }, 8, 'turn');
  const pushed = batch.push(1);
  process.nextTick(() => order.push('tick'));
  void batch.push(2);
  await pushed;
  expect(order).toEqual(['tick', 'batch 1,2']);
});

it('says when what is queued has been handed to send, and nothing when nothing waits', async () => {
  const order: string[] = [];
  const batch = new Batcher<number, number>(async (items) => {
    order.push(`send ${items.join(',')}`);
    return items;
  }, 8);
  expect(batch.sent()).toBeUndefined();
  const pushed = batch.push(1);
  const sent = batch.sent();
  expect(sent).toBeDefined();
  void sent?.then(() => order.push('sent'));
  await pushed;
  expect(order).toEqual(['send 1', 'sent']);
  expect(batch.sent()).toBeUndefined();
});
