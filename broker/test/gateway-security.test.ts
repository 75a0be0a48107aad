// The gateway's security parts without a network: token buckets on a fake
// clock (the bucket law, bounded memory, idle eviction, configuration from
// options and environment), which bearer token was presented, and MCP
// session ids (128 random bits).
import fc from 'fast-check';
import { bearerMatcher } from '../src/http/auth';
import { newSessionId } from '../src/mcp/sessions';
import { brokerOptionsFromEnv, resolveGatewayOptions } from '../src';
import { RequestLimiter, TokenBuckets, resolveRateLimit, type Take } from '../src/http/rate-limit';

/** fast-check runs per property in this file; reported in the test names. */
const numRuns = 300;

function clock(): { now: () => number; advance: (ms: number) => void } {
  let t = 1_000_000;
  return { now: () => t, advance: (ms) => void (t += ms) };
}

describe('TokenBuckets', () => {
  it('allows a burst, then refuses with the time until the next token', () => {
    const c = clock();
    const b = new TokenBuckets({ perSec: 2, burst: 3 }, 100, c.now);
    expect([1, 2, 3].map(() => b.take('a').ok)).toEqual([true, true, true]);
    expect(b.take('a')).toEqual({ ok: false, retryAfterMs: 500 });
    c.advance(250);
    expect(b.take('a')).toEqual({ ok: false, retryAfterMs: 250 });
    c.advance(250);
    expect(b.take('a').ok).toBe(true);
    expect(b.take('a').ok).toBe(false);
    // Another key has its own bucket.
    expect(b.take('b').ok).toBe(true);
  });

  it('refills at a fractional rate and never above the burst', () => {
    const c = clock();
    const b = new TokenBuckets({ perSec: 0.5, burst: 1 }, 100, c.now);
    expect(b.take('k').ok).toBe(true);
    expect(b.take('k')).toEqual({ ok: false, retryAfterMs: 2000 });
    c.advance(3_600_000);
    expect(b.take('k').ok).toBe(true);
    expect(b.take('k').ok).toBe(false);
  });

  it('keeps at most maxKeys buckets however many clients come (100 000 distinct keys)', () => {
    const c = clock();
    const b = new TokenBuckets({ perSec: 1, burst: 5 }, 1000, c.now);
    let most = 0;
    for (let i = 0; i < 100_000; i++) {
      b.take(`10.0.${i >> 8}.${i & 255}`);
      b.take(`10.0.${i >> 8}.${i & 255}`);
      most = Math.max(most, b.size);
    }
    expect(most).toBe(1000);
  });

  it('forgets buckets that are full again (idle keys), without a timer', () => {
    const c = clock();
    const b = new TokenBuckets({ perSec: 10, burst: 10 }, 1_000_000, c.now);
    for (let i = 0; i < 500; i++) b.take(`idle-${i}`);
    expect(b.size).toBe(500);
    c.advance(1000); // long enough for 1 used token to come back
    b.take('fresh');
    expect(b.size).toBe(1);
  });

  it(`matches an unbounded reference model exactly when memory suffices, and only ever allows more when it does not (${numRuns} runs)`, () => {
    const event = fc.record({ key: fc.integer({ min: 0, max: 20 }), dt: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 50 }), fc.integer({ min: 0, max: 5000 })) });
    fc.assert(
      fc.property(fc.double({ min: 0.1, max: 50, noNaN: true }), fc.integer({ min: 1, max: 20 }), fc.integer({ min: 1, max: 30 }), fc.array(event, { maxLength: 300 }), (perSec, burst, maxKeys, events) => {
        const c = clock();
        const roomy = new TokenBuckets({ perSec, burst }, 1000, c.now);
        const tight = new TokenBuckets({ perSec, burst }, maxKeys, c.now);
        const model = new Map<number, { tokens: number; at: number }>();
        for (const { key, dt } of events) {
          c.advance(dt);
          const m = model.get(key) ?? { tokens: burst, at: c.now() };
          m.tokens = Math.min(burst, m.tokens + ((c.now() - m.at) / 1000) * perSec);
          m.at = c.now();
          const expected = m.tokens >= 1;
          if (expected) m.tokens -= 1;
          model.set(key, m);
          const got: Take = roomy.take(String(key));
          expect(got.ok).toBe(expected);
          if (!got.ok) expect(got.retryAfterMs).toBeGreaterThan(0);
          // Forgetting a bucket hands back a full one: a tight limiter may allow more, never less.
          const tightOk = tight.take(String(key)).ok;
          if (expected) expect(tightOk).toBe(true);
          expect(tight.size).toBeLessThanOrEqual(maxKeys);
        }
      }),
      { numRuns },
    );
  });

  it(`never allows more than burst + perSec × elapsed for one key (${numRuns} runs)`, () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 100 }), fc.integer({ min: 1, max: 50 }), fc.array(fc.integer({ min: 0, max: 200 }), { minLength: 1, maxLength: 400 }), (perSec, burst, gaps) => {
        const c = clock();
        const b = new TokenBuckets({ perSec, burst }, 10, c.now);
        let allowed = 0;
        let elapsed = 0;
        for (const gap of gaps) {
          c.advance(gap);
          elapsed += gap;
          if (b.take('one').ok) allowed++;
          expect(allowed).toBeLessThanOrEqual(burst + Math.floor((elapsed / 1000) * perSec + 1e-9));
        }
      }),
      { numRuns },
    );
  });
});

describe('RequestLimiter', () => {
  it('limits IPs and tokens independently; a side left out never refuses', () => {
    const c = clock();
    const both = new RequestLimiter({ perIp: { perSec: 1, burst: 2 }, perToken: { perSec: 1, burst: 1 }, maxKeys: 10 }, c.now);
    expect([both.ip('1.1.1.1').ok, both.ip('1.1.1.1').ok, both.ip('1.1.1.1').ok]).toEqual([true, true, false]);
    expect(both.ip('2.2.2.2').ok).toBe(true);
    expect([both.token(0).ok, both.token(0).ok, both.token(1).ok]).toEqual([true, false, true]);
    const ipOnly = new RequestLimiter({ perIp: { perSec: 1, burst: 1 }, perToken: undefined, maxKeys: 10 }, c.now);
    for (let i = 0; i < 100; i++) expect(ipOnly.token(0).ok).toBe(true);
  });
});

describe('configuration', () => {
  it('resolves defaults and names the bad field', () => {
    expect(resolveRateLimit({ perIp: { perSec: 2.5 } })).toEqual({ perIp: { perSec: 2.5, burst: 3 }, perToken: undefined, maxKeys: 10_000 });
    expect(resolveGatewayOptions().rateLimit).toBeUndefined();
    expect(() => resolveGatewayOptions({ rateLimit: { perIp: { perSec: 0 } } })).toThrow(/rateLimit\.perIp\.perSec/);
    expect(() => resolveGatewayOptions({ rateLimit: { perToken: { perSec: 1, burst: 0.5 } } })).toThrow(/rateLimit\.perToken\.burst/);
    expect(() => resolveGatewayOptions({ rateLimit: { perIp: { perSec: Number.NaN } } })).toThrow(/perSec/);
    expect(() => resolveGatewayOptions({ rateLimit: { maxKeys: 0 } })).toThrow(/maxKeys/);
  });

  it('reads GATEWAY_RATE_LIMIT_* and GATEWAY_TOKEN_RATE_LIMIT_* from the environment', () => {
    expect(brokerOptionsFromEnv({ GATEWAY_AUTH: 'none' }).rateLimit).toBeUndefined();
    expect(brokerOptionsFromEnv({ GATEWAY_AUTH: 'none', GATEWAY_RATE_LIMIT_PER_SEC: '0.5', GATEWAY_RATE_LIMIT_BURST: '4', GATEWAY_TOKEN_RATE_LIMIT_PER_SEC: '100', GATEWAY_RATE_LIMIT_MAX_KEYS: '50' }).rateLimit).toEqual({
      perIp: { perSec: 0.5, burst: 4 },
      perToken: { perSec: 100 },
      maxKeys: 50,
    });
    expect(() => brokerOptionsFromEnv({ GATEWAY_AUTH: 'none', GATEWAY_RATE_LIMIT_PER_SEC: 'fast' })).toThrow(/GATEWAY_RATE_LIMIT_PER_SEC/);
    expect(() => brokerOptionsFromEnv({ GATEWAY_AUTH: 'none', GATEWAY_RATE_LIMIT_PER_SEC: '0' })).toThrow(/GATEWAY_RATE_LIMIT_PER_SEC/);
    expect(() => brokerOptionsFromEnv({ GATEWAY_AUTH: 'none', GATEWAY_TOKEN_RATE_LIMIT_BURST: '5' })).toThrow(/GATEWAY_TOKEN_RATE_LIMIT_BURST needs GATEWAY_TOKEN_RATE_LIMIT_PER_SEC/);
  });
});

describe('bearerMatcher', () => {
  it('tells which configured token was presented, and nothing for others', () => {
    const match = bearerMatcher(['alpha', 'beta', 'alpha']);
    expect(match('Bearer alpha')).toBe(0);
    expect(match('bearer beta')).toBe(1);
    for (const h of [undefined, '', 'Bearer', 'Bearer gamma', 'Basic alpha', 'Bearer alpha beta', 'alpha']) expect(match(h)).toBeUndefined();
  });
});

describe('MCP session ids', () => {
  const samples = 4000;
  const ids = Array.from({ length: samples }, () => newSessionId());

  it('are 128 bits written as 8-4-4-4-12 lower-case hex, never repeated', () => {
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(new Set(ids).size).toBe(samples);
  });

  it(`vary in every one of their 128 bits (${samples} ids; a v4 UUID fixes 6 of them)`, () => {
    const ones = new Array<number>(128).fill(0);
    for (const id of ids) {
      const bytes = Buffer.from(id.replace(/-/g, ''), 'hex');
      for (let bit = 0; bit < 128; bit++) if ((bytes[bit >> 3] as number) & (0x80 >> (bit & 7))) ones[bit] = (ones[bit] as number) + 1;
    }
    // Each bit is 1 in about half the ids: 4000 fair coin flips fall within 45-55 % with overwhelming probability (> 6 sigma).
    const fractions = ones.map((n) => n / samples);
    expect(fractions.filter((p) => p < 0.45 || p > 0.55)).toEqual([]);
  });
});
