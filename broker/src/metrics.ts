import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { QueueDepth } from '@warren/amqp';
import { trackingStates } from '@warren/calls';
import { ErrorCode } from '@warren/jsonrpc';
import type { ScheduleCounts } from '@warren/schedules';

/** Where a call came in. */
export type Via = 'http' | 'mcp';

/** What the metrics read from the rest of the broker at scrape time. */
export interface MetricsSources {
  reconnects(): number;
  lateReplies(): number;
  returned(): number;
  pending(): number;
  sessions(): { sse: number; streamable: number };
  /** Live instances, one entry per instance: its service. */
  instances(): readonly string[];
  /** Each known service's queue figures, read at scrape time (a service left out: not readable). */
  queues(): Promise<readonly ServiceQueues[]>;
  /** Announcements the registry dropped because they did not fit the schema. */
  droppedAnnouncements(): number;
  /** Live instances that report their in-flight tracking: service name and tracking state. */
  tracking(): readonly { readonly service: string; readonly state: string }[];
  /** Occurrences this broker's scheduler fired, missed and skipped, per schedule (none without a scheduler). */
  schedules(): ReadonlyMap<string, ScheduleCounts>;
}

/** One service's queues as the metrics sample them (queue-stats.ts: `unacked` and `retry` from the management API only). */
export interface ServiceQueues extends QueueDepth {
  readonly service: string;
  readonly unacked?: number;
  readonly deadLetters?: number;
  readonly retry?: readonly { readonly messages: number }[];
}

/**
 * The broker's Prometheus metrics, on a registry of its own (never prom-client's
 * global one, so two brokers in one process, as in tests, do not collide).
 */
export class BrokerMetrics {
  readonly registry = new Registry();
  readonly calls: Counter<'method' | 'outcome' | 'via'>;
  readonly duration: Histogram<'method' | 'via'>;
  readonly inFlight: Gauge<'via'>;
  /** Requests the gateway refused before relaying them (errors.ts's catalogue), by its `reason`. */
  readonly refused: Counter<'reason'>;

  constructor(sources: MetricsSources, defaultMetrics: boolean) {
    const registers = [this.registry];
    this.calls = new Counter({
      name: 'warren_gateway_calls_total',
      help: 'Calls relayed by the gateway, by method, outcome (ok or the error code name) and entry point.',
      labelNames: ['method', 'outcome', 'via'],
      registers,
    });
    this.duration = new Histogram({
      name: 'warren_gateway_call_duration_seconds',
      help: 'Time from the gateway publishing a call to its answer (queue wait plus handler time; the gateway cannot tell them apart).',
      labelNames: ['method', 'via'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    });
    this.inFlight = new Gauge({ name: 'warren_gateway_calls_in_flight', help: 'Calls the gateway is relaying now.', labelNames: ['via'], registers });
    sampled(registers, 'warren_amqp_reconnects_total', 'Successful reconnects to RabbitMQ since start.', 'counter', sources.reconnects);
    sampled(registers, 'warren_rpc_late_replies_total', 'Replies that arrived after their call had ended (timed out or cancelled) and were dropped.', 'counter', sources.lateReplies);
    sampled(registers, 'warren_rpc_returned_total', 'Requests RabbitMQ returned unroutable (no service serves the method).', 'counter', sources.returned);
    sampled(registers, 'warren_rpc_pending_calls', 'Calls waiting for a reply in the RPC client.', 'gauge', sources.pending);
    this.refused = new Counter({ name: 'warren_gateway_refused_total', help: 'HTTP requests the gateway refused before relaying them (auth, rate limit, MCP session quotas, malformed), by reason.', labelNames: ['reason'], registers });
    new Gauge({
      name: 'warren_registry_instances',
      help: 'Live service instances in the registry, by service.',
      labelNames: ['service'],
      registers,
      collect() {
        this.reset();
        const counts = new Map<string, number>();
        for (const service of sources.instances()) counts.set(service, (counts.get(service) ?? 0) + 1);
        for (const [service, n] of counts) this.set({ service }, n);
      },
    });
    queueGauges(registers, sources.queues);
    sampled(registers, 'warren_registry_dropped_announcements_total', 'Announcements dropped whole because they do not fit docs/schemas/announcement.schema.json.', 'counter', sources.droppedAnnouncements);
    new Gauge({
      name: 'warren_mcp_sessions',
      help: 'Open MCP sessions by transport.',
      labelNames: ['transport'],
      registers,
      collect() {
        const s = sources.sessions();
        this.set({ transport: 'sse' }, s.sse);
        this.set({ transport: 'streamable-http' }, s.streamable);
      },
    });
    new Gauge({
      name: 'warren_tracking_instances',
      help: 'Live service instances with an in-flight tracker, by service and tracking state (degraded: Redis is not answering and calls run untracked).',
      labelNames: ['service', 'state'],
      registers,
      collect() {
        this.reset();
        // Every state shows, at 0 when no instance is in it, so an alert on `degraded > 0` has a series to read.
        const counts = new Map<string, Map<string, number>>();
        for (const { service, state } of sources.tracking()) {
          const byState = counts.get(service) ?? new Map(trackingStates.map((s) => [s, 0]));
          byState.set(state, (byState.get(state) ?? 0) + 1);
          counts.set(service, byState);
        }
        for (const [service, byState] of counts) for (const [state, n] of byState) this.set({ service, state }, n);
      },
    });
    scheduleCounters(registers, sources.schedules);
    if (defaultMetrics) collectDefaultMetrics({ register: this.registry });
  }
}

/**
 * Queue depth, consumers, dead letters, unacked and retrying per service. One read at scrape time feeds them all
 * (the first gauge collected starts it; the others wait for the same read).
 */
function queueGauges(registers: Registry[], read: () => Promise<readonly ServiceQueues[]>): void {
  let current: { readonly at: number; readonly queues: Promise<readonly ServiceQueues[]> } | undefined;
  const queues = (): Promise<readonly ServiceQueues[]> => {
    // One scrape collects the three gauges back to back: share its read (QueueDepths caches for a second too).
    if (current === undefined || Date.now() - current.at > 500) current = { at: Date.now(), queues: read().catch(() => []) };
    return current.queues;
  };
  const gauge = (name: string, help: string, value: (q: ServiceQueues) => number | undefined): void => {
    new Gauge({
      name,
      help,
      labelNames: ['service'],
      registers,
      async collect() {
        this.reset();
        for (const q of await queues()) {
          const v = value(q);
          if (v !== undefined) this.set({ service: q.service }, v);
        }
      },
    });
  };
  gauge('warren_service_queue_messages', "Requests waiting in the service's request queue (ready, not yet delivered).", (q) => q.messages);
  gauge('warren_service_queue_consumers', "Consumers on the service's request queue (0: nobody serves it).", (q) => q.consumers);
  gauge('warren_service_dead_letter_messages', "Messages in the service's dead-letter queue.", (q) => q.deadLetters);
  gauge('warren_service_queue_unacked_messages', "Requests delivered to a worker and not yet acked (RabbitMQ management API only).", (q) => q.unacked);
  gauge('warren_service_retry_messages', "Retried requests waiting out their backoff in the service's delay queues (RabbitMQ management API only).", (q) => (q.retry === undefined ? undefined : q.retry.reduce((n, r) => n + r.messages, 0)));
}

/** What this process's scheduler did with each schedule's occurrences (docs/scheduling.md, "Metrics"). */
function scheduleCounters(registers: Registry[], read: () => ReadonlyMap<string, ScheduleCounts>): void {
  const counter = (field: 'fired' | 'missed' | 'skipped', help: string): void => {
    new Counter({
      name: `warren_schedule_${field}_total`,
      help,
      labelNames: ['schedule'],
      registers,
      collect() {
        this.reset();
        for (const [schedule, counts] of read()) this.inc({ schedule }, counts[field]);
      },
    });
  };
  counter('fired', 'Schedule occurrences this process fired (on time or caught up after downtime), and run-nows, by schedule.');
  counter('missed', 'Schedule occurrences missed while no scheduler ran and not fired by the catch-up policy, by schedule.');
  counter('skipped', 'Schedule occurrences not fired because a call of the schedule was still running (overlap policy), by schedule.');
  new Counter({
    name: 'warren_schedule_failed_total',
    help: 'Calls this process fired for a schedule (occurrences and run-nows) that ended in an error, by schedule and method.',
    labelNames: ['schedule', 'method'],
    registers,
    collect() {
      this.reset();
      for (const [schedule, counts] of read()) for (const [method, n] of Object.entries(counts.failed)) this.inc({ schedule, method }, n);
    },
  });
}

/** A metric whose value lives elsewhere and is read when scraped. */
function sampled(registers: Registry[], name: string, help: string, type: 'counter' | 'gauge', read: () => number): void {
  if (type === 'counter') {
    new Counter({
      name,
      help,
      registers,
      collect() {
        this.reset();
        this.inc(read());
      },
    });
  } else {
    new Gauge({
      name,
      help,
      registers,
      collect() {
        this.set(read());
      },
    });
  }
}

const codeNames = new Map<number, string>(Object.entries(ErrorCode).map(([name, code]) => [code, snake(name)]));

/**
 * The outcome label of a call: `ok`, the snake_case name of a Warren error
 * code, or `application_error` for codes a service chose itself (kept to one
 * value so a service cannot blow up the label set).
 */
export function outcomeLabel(errorCode: number | undefined): string {
  if (errorCode === undefined) return 'ok';
  return codeNames.get(errorCode) ?? 'application_error';
}

function snake(name: string): string {
  return name.replace(/([a-z])([A-Z])/g, '$1_$2').toLowerCase();
}
