import { OutcomeLog, outcomeState } from '../src/console/outcomes';
import { nearestRank, Throughput } from '../src/console/throughput';
import { resolveConsoleOptions } from '../src/console/options';

test('calls per bucket and nearest-rank p50/p99 per method', () => {
  const t = new Throughput(1000, 10_000);
  for (let ms = 1; ms <= 100; ms++) t.record('add', ms, ms !== 100, 5_000 + ms);
  t.record('add', 7, true, 6_500);
  const snap = t.snapshot(6_900);
  expect(snap.from).toBe(-3_000);
  const add = snap.methods.find((m) => m.method === 'add');
  expect(add?.count).toBe(101);
  expect(add?.series).toEqual([
    { t: 5_000, count: 100, errors: 1, p50: 50, p99: 99 },
    { t: 6_000, count: 1, errors: 0, p50: 7, p99: 7 },
  ]);
});

test('buckets older than the window are dropped, and a method with none left disappears', () => {
  const t = new Throughput(1000, 3000);
  t.record('old', 1, true, 1_000);
  t.record('new', 1, true, 9_000);
  expect(t.snapshot(9_000).methods.map((m) => m.method)).toEqual(['new']);
});

test('a busy bucket keeps a bounded sample, and method names past the bound fold into (other)', () => {
  const t = new Throughput(1000, 10_000, () => 0.5);
  for (let i = 0; i < 10_000; i++) t.record('busy', i % 10, true, 500);
  for (let i = 0; i < 150; i++) t.record(`m${i}`, 1, true, 500);
  const snap = t.snapshot(500);
  expect(snap.methods.find((m) => m.method === 'busy')?.count).toBe(10_000);
  expect(snap.methods.length).toBe(101);
  expect(snap.methods.find((m) => m.method === '(other)')?.count).toBe(51);
});

test('nearestRank', () => {
  expect(nearestRank([1, 2, 3, 4], 50)).toBe(2);
  expect(nearestRank([1, 2, 3, 4], 99)).toBe(4);
  expect(nearestRank([5], 1)).toBe(5);
});

test('the outcome log is bounded and keeps a call once', () => {
  const log = new OutcomeLog(2);
  const o = (callId: string) => ({ callId, method: 'add', state: 'done' as const, endedAt: 0, seenBy: 'gateway' as const });
  expect(log.add(o('a'))).toBe(true);
  expect(log.add(o('a'))).toBe(false);
  log.add(o('b'));
  log.add(o('c'));
  expect(log.recent().map((x) => x.callId)).toEqual(['b', 'c']);
  expect(log.has('a')).toBe(false);
});

test('outcome states from error codes', () => {
  expect([undefined, -32003, -32001, -32005, 42].map(outcomeState)).toEqual(['done', 'cancelled', 'expired', 'failed', 'failed']);
});

test('console options name the bad field', () => {
  expect(() => resolveConsoleOptions({ maxClients: 0 })).toThrow(/ConsoleOptions\.maxClients/);
  expect(resolveConsoleOptions({}).pollMs).toBe(1000);
  expect(resolveConsoleOptions({ maxClients: 3 }).maxClients).toBe(3);
});
