import { MemoryEventLog, eventLogKeys, resolveEventLogOptions } from '../src/index';

describe('eventLogKeys', () => {
  it('builds every key from the prefix, in one place', () => {
    const k = eventLogKeys('warren');
    expect(k.stream('ns.audit')).toBe('warren:eventlog:ns.audit');
    expect(k.record('ns.jobs.progress.abc.1')).toBe('warren:record:ns.jobs.progress.abc.1');
  });

  it.each(['', 'a b', 'a/b', '-x', 'x'.repeat(201), 'a{b}'])('refuses the name %j', (name) => {
    expect(() => eventLogKeys('warren').stream(name)).toThrow(RangeError);
  });

  it('refuses a bad prefix, naming the option', () => {
    expect(() => eventLogKeys('bad prefix')).toThrow(/keyPrefix/);
  });
});

describe('resolveEventLogOptions', () => {
  it('fills defaults and names a bad field', () => {
    expect(resolveEventLogOptions({ url: 'redis://x' })).toMatchObject({ keyPrefix: 'warren', maxEntries: 1000, ttlMs: 86_400_000 });
    expect(() => resolveEventLogOptions({ url: 'redis://x', maxEntries: 0 })).toThrow(/maxEntries/);
    expect(() => resolveEventLogOptions({ url: '' })).toThrow(/url/);
  });
});

describe('MemoryEventLog', () => {
  it('keeps the newest maxEntries, newest first', async () => {
    const log = new MemoryEventLog({ maxEntries: 3 });
    for (let i = 0; i < 5; i++) await log.append('s', { i });
    expect(await log.recent('s', 10)).toEqual([{ i: 4 }, { i: 3 }, { i: 2 }]);
    expect(await log.recent('s', 1)).toEqual([{ i: 4 }]);
  });

  it('forgets streams and records after their TTL', async () => {
    let now = 1000;
    const log = new MemoryEventLog({ ttlMs: 100, now: () => now });
    await log.append('s', 1);
    await log.put('r', { a: 1 });
    await log.put('short', 2, 10);
    now += 50;
    expect(await log.recent('s', 10)).toEqual([1]);
    expect(await log.get('r')).toEqual({ a: 1 });
    expect(await log.get('short')).toBeUndefined();
    now += 100;
    expect(await log.recent('s', 10)).toEqual([]);
    expect(await log.get('r')).toBeUndefined();
  });
});
