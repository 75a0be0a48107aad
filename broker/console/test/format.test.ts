// The console's pure formatting helpers (issue 27's small ones).
import { linePath, parseTimeParam, shortId, toLocalInput } from '../src/format';

describe('shortId', () => {
  it('keeps short ids, and the tail of long call ids', () => {
    expect(shortId('abc.1')).toBe('abc.1');
    expect(shortId('Sb1G8MIN8zZjWxYz0123.ag')).toBe('…N8zZjWxYz0123.ag');
  });

  it('keeps "replay." in front of a replayed dead letter\'s id', () => {
    // What dlq.replay makes: replay.<12 hex>, 19 characters (the old cut gave '…play.0123456789ab').
    expect(shortId('replay.0123456789ab')).toBe('replay.…456789ab');
    expect(shortId('replay.0123456789abcdef')).toBe('replay.…89abcdef');
  });
});

describe('linePath', () => {
  it('breaks the line at empty buckets instead of bridging them', () => {
    expect(linePath([[0, 1], [1, 2], undefined, undefined, [4, 5], [5, 6]])).toBe('M0.0,1.0 L1.0,2.0 M4.0,5.0 L5.0,6.0');
    expect(linePath([undefined, [1, 1], undefined])).toBe('M1.0,1.0');
    expect(linePath([])).toBe('');
  });
});

describe('parseTimeParam: a time in a link, as the form writes it or as typed by hand', () => {
  it('reads ms since the epoch, a date (local midnight) and a date-time (local, or with its zone)', () => {
    expect(parseTimeParam('1796000000000')).toBe(1796000000000);
    expect(parseTimeParam('2026-12-04')).toBe(new Date(2026, 11, 4).getTime());
    expect(parseTimeParam('2026-12-04T09:30')).toBe(new Date(2026, 11, 4, 9, 30).getTime());
    expect(parseTimeParam('2026-12-04 09:30:15')).toBe(new Date(2026, 11, 4, 9, 30, 15).getTime());
    expect(parseTimeParam('2026-12-04T09:30:00Z')).toBe(Date.UTC(2026, 11, 4, 9, 30));
  });
  it('answers undefined for what is not a time, so the view names it instead of throwing', () => {
    for (const bad of ['', 'yesterday', '2026-13-45', '04/12/2026', '99999999999999999999']) expect(parseTimeParam(bad)).toBeUndefined();
    expect(toLocalInput(Number.NaN)).toBe('');
  });
});
