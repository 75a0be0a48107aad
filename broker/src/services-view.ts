import { summarizeInstance, type InstanceSummary, type QueueType } from '@warren/amqp';
import type { JsonSchema } from '@warren/jsonrpc';
import type { Catalogue, CatalogueNotification } from './catalogue';
import type { ServiceQueueStats } from './queue-stats';

/** One service as `GET /services` shows it. */
export interface ServiceView {
  readonly name: string;
  /** The service's queue figures, when RabbitMQ answered (queue-stats.ts: `source` says which API). */
  readonly queue?: ServiceQueueStats;
  readonly instances: readonly InstanceSummary[];
  readonly methods: readonly {
    readonly name: string;
    readonly description?: string;
    readonly tool?: string;
    /** Declared a long-running job by the service. */
    readonly jobStyle: boolean;
    /** Send requests persistent: a job-style method on a durable queue. */
    readonly persistent: boolean;
    readonly params?: JsonSchema;
    readonly result?: JsonSchema;
  }[];
  readonly notifications: readonly string[];
  readonly instanceNotifications: readonly string[];
  /** Every notification the service handles, with its params schema when the service gave one. */
  readonly notificationDetails: readonly CatalogueNotification[];
  readonly durable: boolean;
  readonly queueType: QueueType;
}

/** The body of `GET /services` (ops-routes.ts), as the console reads it. */
export interface ServicesBody {
  /** What the broker runs on; `embedded`: one process, in memory, nothing durable. */
  readonly mode: 'rabbitmq' | 'embedded';
  readonly services: readonly ServiceView[];
  readonly conflicts: readonly string[];
  /** Where the queue figures come from, and why not the management API when it failed. */
  readonly queueSource?: { readonly source: 'management' | 'amqp'; readonly fallbackReason?: string };
}

/** The services and conflicts of `GET /services`, built from the catalogue and each service's queue depth (same order), where known. */
export function servicesView(catalogue: Catalogue, queues: readonly (ServiceQueueStats | undefined)[] = []): { services: ServiceView[]; conflicts: readonly string[] } {
  return {
    services: catalogue.services.map((s, i) => ({
      name: s.name,
      ...(queues[i] === undefined ? {} : { queue: queues[i] }),
      instances: s.instances.map(summarizeInstance),
      methods: [...catalogue.methods.values()].filter((m) => m.service === s.name).map((m) => ({
        name: m.name,
        ...(m.description === undefined ? {} : { description: m.description }),
        ...(m.tool === undefined ? {} : { tool: m.tool.name ?? m.name }),
        jobStyle: m.jobStyle === true,
        persistent: m.persistent,
        ...(m.params === undefined ? {} : { params: m.params }),
        ...(m.result === undefined ? {} : { result: m.result }),
      })),
      notifications: s.notifications,
      instanceNotifications: s.instanceNotifications,
      notificationDetails: s.notificationDetails,
      durable: s.durable,
      queueType: s.queueType,
    })),
    conflicts: catalogue.conflicts,
  };
}
