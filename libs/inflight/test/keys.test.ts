import { hashTag, keys, callTtlMs, resultTtlMs, cancelMarkTtlMs, workerEntryTtlMs, workersTtlMs, minTtlMs } from '../src/keys';
import { resolveTrackerOptions, resolveViewOptions, trackerDefaults } from '../src/options';

describe('keys', () => {
  const k = keys('acme');

  it('builds every key under the prefix', () => {
    expect(k.call('client.1a')).toBe('acme:rec:{client.1a}');
    expect(k.workers).toBe('acme:{acme:workers}');
    expect(k.workersSeen).toBe('acme:{acme:workers}:seen');
    expect(k.workerField('calc', 'i1')).toBe('calc/i1');
    expect(k.cancelChannel('i1')).toBe('acme:cancel:i1');
    expect(k.cancelMarks).toBe('acme:cancel-marks');
    expect(k.cancelMarkIndex).toBe('acme:{acme:cancel-marks}');
    for (const key of [k.call('x'), k.workers, k.workersSeen, k.cancelChannel('i'), k.cancelMarks, k.cancelMarkIndex]) expect(key.startsWith('acme:')).toBe(true);
  });

  it('hash-tags a call key with its call id, so it lands in the slot of that id on Redis Cluster', () => {
    expect(hashTag(k.call('abc.1'))).toBe('abc.1');
    expect(hashTag(k.call('abc.2'))).not.toBe(hashTag(k.call('abc.1')));
  });

  it('puts the two keys the heartbeat script touches in one slot', () => {
    expect(hashTag(k.workers)).toBe(hashTag(k.workersSeen));
    expect(hashTag(keys('other').workers)).not.toBe(hashTag(k.workers));
  });

  it('reads hash tags the way Redis Cluster does', () => {
    expect(hashTag('plain')).toBe('plain');
    expect(hashTag('a{}b')).toBe('a{}b'); // an empty tag does not count
    expect(hashTag('a{b}{c}')).toBe('b'); // the first one does
    expect(hashTag('a{b')).toBe('a{b');
  });

  it('refuses prefixes that could break the layout', () => {
    for (const bad of ['', 'a{b}', 'with space', '-lead', 'x'.repeat(65)]) expect(() => keys(bad)).toThrow(RangeError);
    expect(() => keys('warren.prod:eu-1')).not.toThrow();
  });
});

describe('TTLs', () => {
  const now = 1_000_000;

  it('keeps a running call until its deadline plus the grace period', () => {
    expect(callTtlMs(now + 30_000, now, 60_000)).toBe(90_000);
    expect(callTtlMs(now - 5000, now, 1000)).toBe(minTtlMs); // already past: never 0 or negative
  });

  it('keeps a finished call past its deadline', () => {
    expect(resultTtlMs(now + 10_000, now, 300_000)).toBe(310_000);
    expect(resultTtlMs(now - 1_000_000, now, 300_000)).toBe(minTtlMs);
  });

  it('keeps a cancel mark as long as the call could live, or a default when its deadline is unknown', () => {
    expect(cancelMarkTtlMs(now + 10_000, now, 60_000, 300_000)).toBe(70_000);
    expect(cancelMarkTtlMs(undefined, now, 60_000, 300_000)).toBe(300_000);
  });

  it('outlives a worker entry by far with the worker keys themselves', () => {
    expect(workerEntryTtlMs(1000)).toBe(3000);
    expect(workersTtlMs(1000)).toBeGreaterThan(workerEntryTtlMs(1000));
    expect(workersTtlMs(30_000)).toBeGreaterThan(workerEntryTtlMs(30_000));
  });
});

describe('options', () => {
  it('fills in the documented defaults', () => {
    expect(resolveTrackerOptions()).toMatchObject({ ...trackerDefaults, redis: 'redis://127.0.0.1:6379' });
    expect(resolveViewOptions()).toMatchObject({ keyPrefix: 'warren', cancelTtlMs: 300_000 });
  });

  it('names the bad field', () => {
    expect(() => resolveTrackerOptions({ leaseMs: 0 })).toThrow(/TrackerOptions\.leaseMs/);
    expect(() => resolveTrackerOptions({ maxAttempts: 1.5 })).toThrow(/TrackerOptions\.maxAttempts/);
    expect(() => resolveTrackerOptions({ keyPrefix: 'a b' })).toThrow(/keyPrefix/);
    expect(() => resolveViewOptions({ cancelTtlMs: -1 })).toThrow(/ViewOptions\.cancelTtlMs/);
  });

  it('requires a lease to be renewed at least three times before it runs out', () => {
    expect(() => resolveTrackerOptions({ leaseMs: 2000, heartbeatMs: 1000 })).toThrow(/heartbeatMs/);
    expect(() => resolveTrackerOptions({ leaseMs: 3000, heartbeatMs: 1000 })).not.toThrow();
  });
});
