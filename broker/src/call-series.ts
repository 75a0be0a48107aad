import type { BrokerMetrics, Via } from './metrics';

type CallCounter = ReturnType<BrokerMetrics['calls']['labels']>;
type CallTimer = ReturnType<BrokerMetrics['duration']['labels']>;
type InFlight = ReturnType<BrokerMetrics['inFlight']['labels']>;

/**
 * The gateway's per-call metric series, looked up once per label set and kept: prom-client hashes the
 * labels object on every `inc({...})`, four times per relayed call. The label values are bounded
 * already (methods some service announced, one value for every other; a handful of outcomes; two
 * doors), so the tables stay small.
 */
export class CallSeries {
  private readonly counters = new Map<string, CallCounter>();
  private readonly timers = new Map<string, CallTimer>();
  private readonly flights = new Map<Via, InFlight>();

  constructor(private readonly metrics: BrokerMetrics) {}

  /** `warren_gateway_calls_total{method, outcome, via}`. */
  of(method: string, outcome: string, via: Via): CallCounter {
    const key = `${method}\n${outcome}\n${via}`;
    let series = this.counters.get(key);
    if (series === undefined) this.counters.set(key, (series = this.metrics.calls.labels({ method, outcome, via })));
    return series;
  }

  /** `warren_gateway_call_duration_seconds{method, via}`. */
  timing(method: string, via: Via): CallTimer {
    const key = `${method}\n${via}`;
    let series = this.timers.get(key);
    if (series === undefined) this.timers.set(key, (series = this.metrics.duration.labels({ method, via })));
    return series;
  }

  /** `warren_gateway_calls_in_flight{via}`. */
  inFlight(via: Via): InFlight {
    let series = this.flights.get(via);
    if (series === undefined) this.flights.set(via, (series = this.metrics.inFlight.labels({ via })));
    return series;
  }
}
