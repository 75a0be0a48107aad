/** One method's numbers over one bucket of time. */
export interface ThroughputPoint {
  /** Start of the bucket, ms since the epoch. */
  readonly t: number;
  readonly count: number;
  readonly errors: number;
  /** Milliseconds; absent for an empty bucket. */
  readonly p50?: number;
  readonly p99?: number;
}

export interface ThroughputSnapshot {
  readonly bucketMs: number;
  /** Start of the oldest bucket shown. */
  readonly from: number;
  readonly methods: readonly { readonly method: string; readonly count: number; readonly series: readonly ThroughputPoint[] }[];
}

interface Bucket {
  t: number;
  count: number;
  errors: number;
  /** A uniform sample of the bucket's durations (reservoir), so a busy method costs bounded memory. */
  samples: number[];
}

/** Durations kept per method and bucket; percentiles past it come from a uniform sample. */
const maxSamples = 256;
/** Methods tracked at once; more fold into `(other)` (method names are caller input in part). */
const maxMethods = 100;

/**
 * Calls/s and p50/p99 per method over the last minutes, in fixed buckets:
 * what the Throughput view draws. Fed by every outcome the console sees.
 */
export class Throughput {
  private readonly byMethod = new Map<string, Bucket[]>();
  private readonly buckets: number;

  constructor(readonly bucketMs: number, windowMs: number, private readonly random: () => number = Math.random) {
    this.buckets = Math.max(1, Math.ceil(windowMs / bucketMs));
  }

  record(method: string, durationMs: number | undefined, ok: boolean, at: number): void {
    const key = this.byMethod.has(method) || this.byMethod.size < maxMethods ? method : '(other)';
    const series = this.byMethod.get(key) ?? [];
    this.byMethod.set(key, series);
    const t = at - (at % this.bucketMs);
    let bucket = series[series.length - 1];
    if (bucket === undefined || bucket.t < t) {
      bucket = { t, count: 0, errors: 0, samples: [] };
      series.push(bucket);
      this.trim(series, t);
    } else if (bucket.t > t) {
      // An outcome stamped before the newest bucket (clocks of two sources): counted where it belongs if still kept.
      bucket = series.find((b) => b.t === t);
      if (bucket === undefined) return;
    }
    bucket.count++;
    if (!ok) bucket.errors++;
    if (durationMs === undefined) return;
    if (bucket.samples.length < maxSamples) bucket.samples.push(durationMs);
    else {
      const i = Math.floor(this.random() * bucket.count);
      if (i < maxSamples) bucket.samples[i] = durationMs;
    }
  }

  snapshot(now: number): ThroughputSnapshot {
    const newest = now - (now % this.bucketMs);
    const from = newest - (this.buckets - 1) * this.bucketMs;
    const methods = [];
    for (const [method, series] of this.byMethod) {
      this.trim(series, newest);
      if (series.length === 0) {
        this.byMethod.delete(method);
        continue;
      }
      const points = series.map((b) => {
        const sorted = [...b.samples].sort((x, y) => x - y);
        return sorted.length === 0 ? { t: b.t, count: b.count, errors: b.errors } : { t: b.t, count: b.count, errors: b.errors, p50: nearestRank(sorted, 50), p99: nearestRank(sorted, 99) };
      });
      methods.push({ method, count: points.reduce((n, p) => n + p.count, 0), series: points });
    }
    methods.sort((a, b) => b.count - a.count || a.method.localeCompare(b.method));
    return { bucketMs: this.bucketMs, from, methods };
  }

  private trim(series: Bucket[], newest: number): void {
    const oldest = newest - (this.buckets - 1) * this.bucketMs;
    while (series.length > 0 && (series[0] as Bucket).t < oldest) series.shift();
  }
}

/** Nearest-rank percentile of sorted values. */
export function nearestRank(sorted: readonly number[], p: number): number {
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(rank, sorted.length) - 1] as number;
}
