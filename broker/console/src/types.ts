// The shapes the broker sends (GET /services, the feed's events, dlq.*), as far as the console reads them.

export interface Progress {
  readonly fraction: number;
  readonly message?: string;
  readonly at: number;
}

export interface ClusterCall {
  readonly callId: string;
  readonly method: string;
  readonly service?: string;
  readonly worker?: string;
  readonly attempt?: number;
  readonly startedAt?: number;
  readonly deadline?: number;
  readonly cancelRequested?: boolean;
  readonly state?: string;
  readonly nextTryAt?: number;
  readonly progress?: Progress;
}

export interface GatewayCall {
  readonly callId: string;
  readonly method: string;
  readonly via: string;
  readonly startedAt: number;
}

export interface InflightEvent {
  readonly at: number;
  readonly configured: boolean;
  readonly calls: readonly ClusterCall[];
  readonly gateway: readonly GatewayCall[];
  readonly error?: string;
  /** performance.now() when the page read it (set by the page, not sent). */
  readonly receivedAt?: number;
}

/** A tick's change to the calls in flight (`inflight-delta`): entries new or changed, and ids gone. */
export interface InflightDelta {
  readonly at: number;
  readonly configured: boolean;
  readonly calls: { readonly upsert: readonly ClusterCall[]; readonly remove: readonly string[] };
  readonly gateway: { readonly upsert: readonly GatewayCall[]; readonly remove: readonly string[] };
  readonly error?: string;
}

export type OutcomeState = 'done' | 'failed' | 'cancelled' | 'expired';

export interface Outcome {
  readonly callId: string;
  readonly method: string;
  readonly service?: string;
  readonly worker?: string;
  readonly attempt?: number;
  readonly state: OutcomeState;
  readonly code?: number;
  readonly durationMs?: number;
  readonly endedAt: number;
  readonly seenBy: 'gateway' | 'watcher';
}

export interface ThroughputPoint {
  readonly t: number;
  readonly count: number;
  readonly errors: number;
  readonly p50?: number;
  readonly p99?: number;
}

export interface ThroughputSnapshot {
  readonly bucketMs: number;
  readonly from: number;
  readonly methods: readonly { readonly method: string; readonly count: number; readonly series: readonly ThroughputPoint[] }[];
}

export interface InstanceSummary {
  readonly instanceId: string;
  readonly startedAt?: number;
  readonly lastSeen?: number;
  readonly running?: number;
  readonly metadata?: Record<string, unknown>;
  readonly tracking?: { readonly state: string; readonly since?: number; readonly untracked?: number };
  readonly consuming?: boolean;
  /** Absent from instances that do not report it (older, or another language's). */
  readonly worker?: WorkerReport;
}

export type WorkerAction = 'pause' | 'resume' | 'drain' | 'cancel-all';

/** An instance's `worker` report (docs/schemas/announcement.schema.json). */
export interface WorkerReport {
  readonly host: string;
  readonly pid: number;
  readonly prefetch: number;
  readonly paused: boolean;
  readonly draining: boolean;
  readonly handled: number;
  readonly failed: number;
  readonly lastControl?: { readonly requestId: string; readonly action: WorkerAction; readonly at: number; readonly cancelled?: number };
}

export interface ServiceSummary {
  readonly name: string;
  readonly instances: readonly InstanceSummary[];
  readonly methods: readonly { readonly name: string; readonly description?: string; readonly tool?: string; readonly jobStyle?: boolean; readonly persistent?: boolean }[];
  readonly notifications: readonly string[];
  readonly instanceNotifications?: readonly string[];
  readonly queue?: QueueFigures;
}

/** A service's queue figures (GET /services `queue`): `unacked`, `rates` and `retry` come from the management API only. */
export interface QueueFigures {
  readonly source?: 'management' | 'amqp';
  readonly messages: number;
  readonly consumers: number;
  readonly unacked?: number;
  readonly rates?: { readonly publish: number; readonly deliver: number; readonly ack: number };
  readonly deadLetters?: number;
  readonly retry?: readonly { readonly delayMs: number; readonly messages: number }[];
}

export interface ServicesResponse {
  /** What the broker runs on; `embedded`: one process, in memory, nothing durable. */
  readonly mode?: 'rabbitmq' | 'embedded';
  readonly services: readonly ServiceSummary[];
  readonly conflicts?: readonly unknown[];
  /** Where the queue figures come from, and why not the management API when it failed. */
  readonly queueSource?: { readonly source: 'management' | 'amqp'; readonly fallbackReason?: string };
}

export interface DiscoverMethod {
  readonly name: string;
  readonly description?: string;
  readonly 'x-warren-service'?: string;
  readonly 'x-warren-params-schema'?: unknown;
  readonly result?: { readonly schema?: unknown };
  readonly 'x-warren-tool'?: { readonly name: string };
}

export interface DiscoverDocument {
  readonly methods: readonly DiscoverMethod[];
}

export interface DeadLetter {
  readonly id: string;
  readonly service: string;
  readonly method: string;
  readonly callId: string;
  readonly reason: string;
  readonly code?: number;
  readonly attempts: number;
  readonly deadLetteredAt: number;
  readonly paramsBytes: number;
}

/** `dlq.show`: a dead letter with its request and AMQP side. */
export interface DeadLetterDetail extends DeadLetter {
  readonly request: unknown;
  readonly amqp?: { readonly properties: Readonly<Record<string, string | number>>; readonly headers: Readonly<Record<string, unknown>>; readonly exchange: string; readonly routingKey: string };
}

/** One schedule as `schedule.list` answers it (@warren/schedules ScheduleEntry, as far as the console reads it). */
export interface ScheduleItem {
  readonly name: string;
  readonly method: string;
  readonly timing: { readonly kind: 'cron'; readonly cron: string; readonly timezone: string } | { readonly kind: 'interval'; readonly everyMs: number };
  readonly overlap: 'skip' | 'queue' | 'allow';
  readonly catchUp: { readonly policy: 'none' | 'last' | 'all'; readonly max?: number };
  readonly paused: boolean;
  readonly source: string;
  readonly nextRun?: number;
  readonly state: {
    readonly lastRun?: { readonly callId: string; readonly at: number; readonly outcome: 'running' | 'ok' | 'error'; readonly errorCode?: number; readonly manual?: boolean; readonly finishedAt?: number };
  };
}

/** One finished call of the outcome history (history.list, @warren/inflight's HistoryItem). */
export interface HistoryItem {
  readonly id: string;
  readonly callId: string;
  readonly state: OutcomeState;
  readonly service?: string;
  readonly method?: string;
  readonly worker?: string;
  readonly attempt?: number;
  readonly startedAt?: number;
  readonly finishedAt?: number;
  readonly deadline?: number;
  readonly durationMs?: number;
  readonly code?: number;
  readonly error?: { readonly code: number; readonly message: string; readonly data?: unknown };
}

export interface HistoryPage {
  readonly items: readonly HistoryItem[];
  readonly next?: string;
}

/** One call as calls.show tells it (@warren/inflight's CallDetail). */
export interface CallDetail {
  readonly callId: string;
  readonly state: 'running' | 'queued' | 'retrying' | 'unknown' | OutcomeState;
  readonly service?: string;
  readonly method?: string;
  readonly worker?: string;
  readonly attempt?: number;
  readonly startedAt?: number;
  readonly deadline?: number;
  readonly leaseUntil?: number;
  readonly nextTryAt?: number;
  readonly finishedAt?: number;
  readonly cancelRequested: boolean;
  readonly response?: { readonly result?: unknown; readonly error?: { readonly code: number; readonly message: string; readonly data?: unknown } };
  readonly error?: { readonly code: number; readonly message: string; readonly data?: unknown };
  readonly progress?: { readonly fraction?: number; readonly message?: string; readonly at?: number };
  readonly history?: HistoryItem;
  /** Earlier attempts a later one replaced, oldest first. */
  readonly attempts?: readonly PastAttempt[];
  /** Its last progress reports, oldest first. */
  readonly progressLog?: readonly { readonly fraction: number; readonly message?: string; readonly at: number }[];
  /** The trace id of its request's traceparent header. */
  readonly traceId?: string;
  /** Its params as JSON text, cut to the first 4 KiB when `truncated` (`chars`: the whole text's length). */
  readonly params?: { readonly text: string; readonly truncated: boolean; readonly chars: number };
}

export interface PastAttempt {
  readonly attempt: number;
  readonly worker: string;
  readonly startedAt: number;
  readonly endedAt: number;
  readonly outcome: 'lost' | 'retried' | 'released';
}
