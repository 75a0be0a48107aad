// The valid range of x-warren-deadline (docs/protocol.md, "Deadlines"): NaN and infinity are ignored
// (the default deadline applies); a deadline past 8.64e15 ms (year 275760; int64 goes to 9.2e18)
// reads as 8.64e15, so the TTLs derived from it (the in-flight store's, in Redis) stay valid.
import { deadlineHeader, maxDeadlineMs } from '../src/wire/headers';

const read = (value: unknown): number | undefined => deadlineHeader({ 'x-warren-deadline': value });

describe('x-warren-deadline range', () => {
  it('ignores NaN and infinity', () => {
    for (const v of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) expect(read(v)).toBeUndefined();
  });

  it('reads a deadline past the largest as the largest, whatever its type', () => {
    expect(maxDeadlineMs).toBe(8_640_000_000_000_000);
    expect(read(2 ** 63)).toBe(maxDeadlineMs);
    expect(read(2n ** 63n - 1n)).toBe(maxDeadlineMs);
    expect(read('9999999999999999')).toBe(maxDeadlineMs);
    expect(read(maxDeadlineMs - 1)).toBe(maxDeadlineMs - 1);
  });
});
