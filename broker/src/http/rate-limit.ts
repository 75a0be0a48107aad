import { checkInt } from '@warren/config';
/**
 * Per-client rate limits for the gateway: a token bucket per client IP and
 * one per bearer token. Written here rather than taken from
 * `@fastify/rate-limit` because that plugin counts fixed windows under one key
 * per request, while the gateway wants two independent buckets (IP before
 * auth, so token guessing is throttled too; token after it) with a burst and
 * a sustained rate. Memory is bounded: at most `maxKeys` buckets, least
 * recently used dropped first, and a bucket idle long enough to be full again
 * is dropped as soon as it is seen, since a full bucket and no bucket mean the
 * same thing.
 */

/** One bucket's shape: how fast it refills and how much it holds. */
export interface BucketSpec {
  /** Requests per second allowed, sustained (fractions allowed: 0.5 is one every 2 s). */
  readonly perSec: number;
  /** Requests allowed at once after a quiet spell (the bucket's size). @default max(1, ceil(perSec)) */
  readonly burst?: number;
}

/** The gateway's rate limits; each side is off unless given. */
export interface RateLimitOptions {
  /**
   * A bucket per client IP, checked before authentication on every route but
   * the probes and /metrics. The IP is the socket's peer address: behind a
   * reverse proxy every client shares the proxy's. @default none
   */
  readonly perIp?: BucketSpec;
  /** A bucket per configured bearer token, checked after it is accepted (only with `tokens`). @default none */
  readonly perToken?: BucketSpec;
  /** Most client IPs tracked at once; past it the least recently seen is forgotten (and gets a full bucket back). @default 10000 */
  readonly maxKeys?: number;
}

export interface ResolvedBucketSpec {
  readonly perSec: number;
  readonly burst: number;
}

export interface ResolvedRateLimit {
  readonly perIp: ResolvedBucketSpec | undefined;
  readonly perToken: ResolvedBucketSpec | undefined;
  readonly maxKeys: number;
}

export const rateLimitDefaults = { maxKeys: 10_000 } as const;

/** Fills in defaults and names the bad field. */
export function resolveRateLimit(options: RateLimitOptions | undefined): ResolvedRateLimit | undefined {
  if (options === undefined) return undefined;
  const field = 'GatewayOptions.rateLimit';
  const maxKeys = options.maxKeys ?? rateLimitDefaults.maxKeys;
  checkInt(`${field}.maxKeys`, maxKeys);
  return { perIp: resolveBucket(options.perIp, `${field}.perIp`), perToken: resolveBucket(options.perToken, `${field}.perToken`), maxKeys };
}

function resolveBucket(spec: BucketSpec | undefined, field: string): ResolvedBucketSpec | undefined {
  if (spec === undefined) return undefined;
  if (typeof spec.perSec !== 'number' || !Number.isFinite(spec.perSec) || spec.perSec <= 0) throw new RangeError(`${field}.perSec must be a positive number, got ${String(spec.perSec)}`);
  const burst = spec.burst ?? Math.max(1, Math.ceil(spec.perSec));
  checkInt(`${field}.burst`, burst);
  return { perSec: spec.perSec, burst };
}

/** The outcome of taking one token: go ahead, or wait `retryAfterMs` for the next one. */
export type Take = { readonly ok: true } | { readonly ok: false; readonly retryAfterMs: number };

interface Bucket {
  tokens: number;
  /** When `tokens` was last brought up to date (ms, the limiter's clock). */
  at: number;
}

/**
 * Token buckets by key, with bounded memory.
 *
 * @example
 * const buckets = new TokenBuckets({ perSec: 10, burst: 20 }, 10_000);
 * if (!buckets.take(request.ip).ok) // answer 429
 */
export class TokenBuckets {
  /** In least-recently-used order: a key is moved to the end whenever it is used. */
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    private readonly spec: ResolvedBucketSpec,
    private readonly maxKeys: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Buckets held now (for tests and metrics). */
  get size(): number {
    return this.buckets.size;
  }

  /** Takes one token for `key`. */
  take(key: string): Take {
    const now = this.now();
    const held = this.buckets.get(key);
    // A new key needs room for itself.
    this.evict(now, held ? this.maxKeys : this.maxKeys - 1);
    const bucket = held ? this.refilled(held, now) : { tokens: this.spec.burst, at: now };
    if (held) this.buckets.delete(key);
    this.buckets.set(key, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return { ok: true };
    }
    return { ok: false, retryAfterMs: Math.max(1, Math.ceil(((1 - bucket.tokens) / this.spec.perSec) * 1000)) };
  }

  private refilled(bucket: Bucket, now: number): Bucket {
    bucket.tokens = Math.min(this.spec.burst, bucket.tokens + ((now - bucket.at) / 1000) * this.spec.perSec);
    bucket.at = now;
    return bucket;
  }

  /**
   * Drops buckets from the least recently used end while there are more than
   * `keep` or they are full again anyway; stops at the first one still needed, so
   * each call does constant work on average.
   */
  private evict(now: number, keep: number): void {
    for (const [key, bucket] of this.buckets) {
      const full = bucket.tokens + ((now - bucket.at) / 1000) * this.spec.perSec >= this.spec.burst;
      if (!full && this.buckets.size <= keep) return;
      this.buckets.delete(key);
    }
  }
}

/** Which limit refused a request. */
export type RateLimitScope = 'ip' | 'token';

/** The gateway's two limits together: call `ip` before authentication and `token` after. */
export class RequestLimiter {
  private readonly ips: TokenBuckets | undefined;
  private readonly tokens: TokenBuckets | undefined;

  constructor(limits: ResolvedRateLimit, now?: () => number) {
    this.ips = limits.perIp && new TokenBuckets(limits.perIp, limits.maxKeys, now);
    // One bucket per configured token: the key space is the token list, never what callers send.
    this.tokens = limits.perToken && new TokenBuckets(limits.perToken, Number.MAX_SAFE_INTEGER, now);
  }

  ip(address: string): Take {
    return this.ips ? this.ips.take(address) : { ok: true };
  }

  /** `index`: which configured token the request presented (never the token itself). */
  token(index: number): Take {
    return this.tokens ? this.tokens.take(String(index)) : { ok: true };
  }
}
