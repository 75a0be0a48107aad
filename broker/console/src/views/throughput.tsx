import { duration, linePath } from '../format';
import type { Live } from '../live';
import type { ThroughputPoint } from '../types';
import { Empty, Header } from './common';

export function ThroughputView(props: { live: Live }) {
  const t = props.live.throughput;
  if (!t) return <><Header title="Throughput" /><Empty>Waiting for the live feed…</Empty></>;
  const buckets = Math.round((Date.now() - t.from) / t.bucketMs) + 1;
  const minutes = Math.round((buckets * t.bucketMs) / 60_000);
  return (
    <>
      <Header title="Throughput" sub={`Calls/s and p50/p99 per method over the last ${minutes} minutes, in ${t.bucketMs / 1000}-second buckets.`} />
      {t.methods.length === 0 ? <Empty>No calls finished in the window yet.</Empty> : null}
      <div class="cards charts">
        {t.methods.map((m) => {
          const series = fill(m.series, t.from, t.bucketMs, buckets);
          const lastMinute = series.slice(-Math.round(60_000 / t.bucketMs));
          const count = lastMinute.reduce((n, p) => n + p.count, 0);
          const errors = lastMinute.reduce((n, p) => n + p.errors, 0);
          const recent = [...series].reverse().find((p) => p.p50 !== undefined);
          return (
            <section class="card chart-card" key={m.method} aria-label={`Throughput of ${m.method}`} data-method={m.method}>
              <header class="card-head">
                <h2 class="mono">{m.method}</h2>
              </header>
              <div class="stats">
                <div><b>{(count / 60).toFixed(count >= 60 ? 1 : 2)}</b><span>calls/s (1 min)</span></div>
                <div><b>{duration(recent?.p50)}</b><span>p50</span></div>
                <div><b>{duration(recent?.p99)}</b><span>p99</span></div>
                <div><b class={errors > 0 ? 'bad' : ''}>{errors}</b><span>errors (1 min)</span></div>
              </div>
              <Chart series={series} bucketMs={t.bucketMs} total={m.count} />
            </section>
          );
        })}
      </div>
    </>
  );
}

function fill(series: readonly ThroughputPoint[], from: number, bucketMs: number, n: number): ThroughputPoint[] {
  const byT = new Map(series.map((p) => [p.t, p]));
  return Array.from({ length: n }, (_, i) => byT.get(from + i * bucketMs) ?? { t: from + i * bucketMs, count: 0, errors: 0 });
}

const W = 360;
const H = 96;

/** Bars: calls/s; lines: p50 (solid) and p99 (dashed), on their own scale. */
function Chart(props: { series: readonly ThroughputPoint[]; bucketMs: number; total: number }) {
  const s = props.series;
  const rate = (p: ThroughputPoint): number => p.count / (props.bucketMs / 1000);
  const maxRate = Math.max(...s.map(rate), 0.0001);
  const maxLatency = Math.max(...s.map((p) => p.p99 ?? 0), 0.0001);
  const bw = W / s.length;
  // A gap where a bucket had no calls: the line does not pretend the minutes between had a latency.
  const line = (key: 'p50' | 'p99'): string => linePath(s.map((p, i) => (p[key] === undefined ? undefined : [(i + 0.5) * bw, H - (p[key] / maxLatency) * (H - 6) - 3])));
  return (
    <figure class="chart" data-total={props.total}>
      <svg viewBox={`0 0 ${W} ${H}`} preserveAspectRatio="none" role="img" aria-label={`calls per second, peak ${maxRate.toFixed(2)}; p99 peak ${duration(maxLatency)}`}>
        {s.map((p, i) => {
          const h = (rate(p) / maxRate) * (H - 4);
          return <rect key={p.t} class={p.errors > 0 ? 'bar-err' : 'bar-ok'} x={i * bw + 0.5} y={H - h} width={Math.max(0.5, bw - 1)} height={h} />;
        })}
        <path class="p50" d={line('p50')} />
        <path class="p99" d={line('p99')} />
      </svg>
      <div class="axis" aria-hidden="true"><span>{Math.round((s.length * props.bucketMs) / 60_000)} min ago</span><span>now</span></div>
      <figcaption>
        <span class="key key-bar" /> calls/s (peak {maxRate.toFixed(2)}) <span class="key key-p50" /> p50 <span class="key key-p99" /> p99 (peak {duration(maxLatency)})
      </figcaption>
    </figure>
  );
}
