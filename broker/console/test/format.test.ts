// The console's pure formatting helpers (issue 27's small ones).
import { linePath, shortId } from '../src/format';

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
