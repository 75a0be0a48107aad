import fc from 'fast-check';
import { names } from '../../src/wire/names';
import { DelayHeader, delayBitHeader, delayHeaders, delayLevels, delayLevelsOf, delayTopology, maxDelayMs } from '../../src/wire/delay';
import { dueAtOf } from '../../src/engine/delay-options';

describe('delay decomposition', () => {
  it('waits in the level of every set bit, highest first', () => {
    expect(delayLevelsOf(0)).toEqual([]);
    expect(delayLevelsOf(1)).toEqual([0]);
    expect(delayLevelsOf(5)).toEqual([2, 0]);
    expect(delayLevelsOf(1000)).toEqual([9, 8, 7, 6, 5, 3]);
    expect(delayLevelsOf(maxDelayMs)).toEqual(Array.from({ length: delayLevels }, (_, i) => delayLevels - 1 - i));
  });

  it('covers 30 days and more, to 2^32 − 1 ms', () => {
    expect(maxDelayMs).toBeGreaterThanOrEqual(30 * 24 * 3_600_000);
    expect(() => delayLevelsOf(maxDelayMs + 1)).toThrow(RangeError);
    expect(() => delayLevelsOf(-1)).toThrow(RangeError);
    expect(() => delayLevelsOf(1.5)).toThrow(RangeError);
  });

  it('adds up to exactly the delay asked for, any value, in at most one hop per level', () => {
    fc.assert(fc.property(fc.integer({ min: 0, max: maxDelayMs }), (delay) => {
      const levels = delayLevelsOf(delay);
      expect(levels.reduce((sum, k) => sum + 2 ** k, 0)).toBe(delay);
      expect(new Set(levels).size).toBe(levels.length);
      expect(levels.length).toBeLessThanOrEqual(delayLevels);
    }));
  });

  it('writes one string header per level, and where to go when due', () => {
    const h = delayHeaders(6, 'event', 1234);
    expect(h[DelayHeader.to]).toBe('event');
    expect(h[DelayHeader.due]).toBe(1234);
    expect([0, 1, 2, 3].map((k) => h[delayBitHeader(k)])).toEqual(['0', '1', '1', '0']);
    expect(Object.keys(h).filter((k) => k.startsWith('warren-delay-') && k !== DelayHeader.to)).toHaveLength(delayLevels);
  });
});

describe('delay topology', () => {
  const n = names('t');
  const t = delayTopology(n);

  it('gives every level a durable classic queue whose TTL is 2^level ms, dead-lettering one level down', () => {
    expect(t.queues).toHaveLength(delayLevels);
    for (let level = 0; level < delayLevels; level++) {
      const q = t.queues.find((d) => d.name === n.delayQueue(level));
      expect(q?.options).toEqual({ durable: true, arguments: { 'x-queue-type': 'classic', 'x-message-ttl': 2 ** level, 'x-dead-letter-exchange': level === 0 ? n.delayDueExchange : n.delayExchange(level - 1) } });
    }
  });

  it('declares every exchange it binds, the due exchange ending in the request and event exchanges', () => {
    const declared = new Set(t.exchanges.map((e) => e.name));
    for (const b of t.bindings) expect(declared.has(b.exchange)).toBe(true);
    for (const b of t.exchangeBindings ?? []) {
      expect(declared.has(b.source)).toBe(true);
      expect(declared.has(b.destination)).toBe(true);
    }
    expect(t.exchangeBindings).toEqual(expect.arrayContaining([
      { destination: n.requestExchange, source: n.delayDueExchange, routingKey: '', arguments: { 'x-match': 'all', [DelayHeader.to]: 'call' } },
      { destination: n.eventExchange, source: n.delayDueExchange, routingKey: '', arguments: { 'x-match': 'all', [DelayHeader.to]: 'event' } },
    ]));
  });
});

describe('dueAtOf', () => {
  const now = 1_700_000_000_000;
  it('reads delayMs or notBefore (a Date or ms), now when absent, zero or past', () => {
    expect(dueAtOf({}, now)).toBeUndefined();
    expect(dueAtOf({ delayMs: 0 }, now)).toBeUndefined();
    expect(dueAtOf({ delayMs: 250 }, now)).toBe(now + 250);
    expect(dueAtOf({ notBefore: now + 1000 }, now)).toBe(now + 1000);
    expect(dueAtOf({ notBefore: new Date(now + 60_000) }, now)).toBe(now + 60_000);
    expect(dueAtOf({ notBefore: new Date(now - 5) }, now)).toBeUndefined();
  });

  it('refuses both at once, a bad value and a delay past the longest, naming the field', () => {
    expect(() => dueAtOf({ delayMs: 1, notBefore: now }, now)).toThrow(/not both/);
    expect(() => dueAtOf({ delayMs: -1 }, now)).toThrow(/delayMs/);
    expect(() => dueAtOf({ delayMs: maxDelayMs + 1 }, now)).toThrow(/delayMs/);
    expect(() => dueAtOf({ notBefore: new Date('nope') }, now)).toThrow(/notBefore/);
    expect(() => dueAtOf({ notBefore: now + maxDelayMs + 1 }, now)).toThrow(/notBefore/);
  });
});
