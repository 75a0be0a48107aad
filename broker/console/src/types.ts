// The shapes the broker sends (GET /services, the feed's events, dlq.*, history.list, calls.show,
// schedule.list): the server's own types, imported as types only (ESLint forbids value imports
// here, so nothing of the server reaches the bundle). Only what no server type names is written out.
import type { ServicesBody, ServiceView } from '../../src/services-view';
import type { InflightEvent as FedInflight } from '../../src/console/feed-events';

export type { Progress } from '@warren/calls';
export type { GatewayCall } from '../../src/gateway-calls';
export type { FedCall as ClusterCall } from '../../src/console/inflight-delta';
export type { InflightDeltaEvent as InflightDelta, OutcomesEvent, HelloEvent } from '../../src/console/feed-events';
export type { Outcome, OutcomeState } from '../../src/console/outcomes';
export type { ThroughputPoint, ThroughputSnapshot } from '../../src/console/throughput';
export type { ServiceQueueStats as QueueFigures } from '../../src/queue-stats';
export type { InstanceSummary, WorkerAction, WorkerReport, DeadLetter, DeadLetterDetail } from '@warren/amqp';
export type { HistoryItem, HistoryPage, CallDetail, PastAttempt, DelayedCall } from '@warren/inflight';
export type { ScheduleEntry as ScheduleItem } from '@warren/schedules';

/** `inflight`, and the page's own copy of the lists it keeps up to date from the deltas. */
export interface InflightEvent extends FedInflight {
  /** performance.now() when the page read it (set by the page, not sent). */
  readonly receivedAt?: number;
}

export type ServiceSummary = ServiceView;
export type ServicesResponse = ServicesBody;

/** One method of the `rpc.discover` document (OpenRPC, with Warren's `x-warren-*` extensions), as far as the console reads it. */
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
