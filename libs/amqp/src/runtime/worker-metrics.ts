// A worker's Prometheus metrics, served on its ops port as /metrics
// (service-main.ts). One registry per WorkerMetrics, never prom-client's
// global one, so two services in one process (tests, embedded mode) do not
// collide. Names follow the broker's (broker/src/metrics.ts): warren_worker_*.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { trackingStates, type TrackingReport } from '@warren/calls';
import { ErrorCode } from '@warren/jsonrpc';
import type { ServiceObserver, SettledRequest } from './service-observer';

/** What the metrics read from the running service at scrape time. */
export interface WorkerMetricsSources {
  /** Handlers running now. */
  running(): number;
  /** The tracker's report; undefined when the service tracks nothing (or has not started). */
  tracking(): TrackingReport | undefined;
}

export interface WorkerMetricsOptions {
  /** The `service` label on every series. */
  readonly service: string;
  /** The `instance_id` label on the state gauges (Prometheus's own `instance` label is the scrape target). */
  readonly instanceId?: string;
  /** Also export Node's process metrics (CPU, memory, event-loop lag). @default true */
  readonly defaultMetrics?: boolean;
}

const seconds = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/**
 * Per-method counters by outcome and error code, handler and queue-wait
 * histograms, the in-flight gauge and the tracking state of one worker.
 *
 * @example
 * const metrics = new WorkerMetrics({ service: 'calculator' });
 * const service = await startService({ ...options, observer: metrics });
 * metrics.sample({ running: () => service.stats().running, tracking: () => tracker?.report() });
 * const text = await metrics.registry.metrics(); // Prometheus text format
 */
export class WorkerMetrics implements ServiceObserver {
  readonly registry = new Registry();
  private readonly calls: Counter<'method' | 'outcome'>;
  private readonly errors: Counter<'method' | 'code'>;
  private readonly handler: Histogram<'method'>;
  private readonly queueWait: Histogram<'method'>;
  private sources: WorkerMetricsSources | undefined;

  constructor(options: WorkerMetricsOptions) {
    this.registry.setDefaultLabels({ service: options.service });
    const registers = [this.registry];
    this.calls = new Counter({
      name: 'warren_worker_requests_total',
      help: 'Requests this worker settled, by method and outcome (ok, error, retried, expired, dead_lettered, requeued, from_store).',
      labelNames: ['method', 'outcome'],
      registers,
    });
    this.errors = new Counter({ name: 'warren_worker_errors_total', help: 'Error answers this worker sent, by method and error code name (application_error: a code the service chose).', labelNames: ['method', 'code'], registers });
    this.handler = new Histogram({ name: 'warren_worker_handler_duration_seconds', help: 'Delivery to settle of a request that ran here (tracking plus handler).', labelNames: ['method'], buckets: seconds, registers });
    this.queueWait = new Histogram({
      name: 'warren_worker_queue_wait_seconds',
      help: "Caller's first publish to this delivery (queue wait, plus retry delays for a retried call).",
      labelNames: ['method'],
      buckets: seconds,
      registers,
    });
    const read = (): WorkerMetricsSources | undefined => this.sources;
    new Gauge({
      name: 'warren_worker_requests_in_flight',
      help: 'Requests this worker is handling now.',
      registers,
      collect() {
        this.set(read()?.running() ?? 0);
      },
    });
    const instance = options.instanceId === undefined ? {} : { instance_id: options.instanceId };
    new Gauge({
      name: 'warren_worker_tracking_state',
      help: 'The in-flight tracker state of this worker: 1 on the current state, 0 on the others (no series: no tracker).',
      labelNames: ['state', 'instance_id'],
      registers,
      collect() {
        this.reset();
        const report = read()?.tracking();
        if (report === undefined) return;
        for (const state of trackingStates) this.set({ ...instance, state }, state === report.state ? 1 : 0);
      },
    });
    new Counter({
      name: 'warren_worker_untracked_total',
      help: 'Calls run (or refused, when tracking is required) without tracking since start.',
      registers,
      collect() {
        this.reset();
        this.inc(read()?.tracking()?.untracked ?? 0);
      },
    });
    if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: this.registry });
  }

  /** Where the gauges read from; set once the service runs (before that they read 0 / nothing). */
  sample(sources: WorkerMetricsSources): void {
    this.sources = sources;
  }

  settled(request: SettledRequest): void {
    const method = request.method;
    this.calls.inc({ method, outcome: request.outcome });
    if (request.code !== undefined) this.errors.inc({ method, code: codeLabel(request.code) });
    if (request.handlerSeconds !== undefined) this.handler.observe({ method }, request.handlerSeconds);
    if (request.queueWaitSeconds !== undefined) this.queueWait.observe({ method }, request.queueWaitSeconds);
  }
}

const codeNames = new Map<number, string>(Object.entries(ErrorCode).map(([name, code]) => [code, name.replace(/([a-z])([A-Z])/g, '$1_$2').toLowerCase()]));

/** The snake_case name of a Warren error code, or `application_error` (one value, so a service cannot blow up the label set). */
function codeLabel(code: number): string {
  return codeNames.get(code) ?? 'application_error';
}
