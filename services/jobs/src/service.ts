// What the jobs service is, apart from where it connects and stores: the options its main
// (RabbitMQ + Redis) and embedded mode (scripts/embedded.ts, in memory) both pass to startService.
import type { CallTracker, ServiceEnv, ServiceOptions } from '@warren/amqp';
import { envValue, type Env } from '@warren/config';
import type { EventStore } from '@warren/eventlog';
import type { CallStatus, TrackerOptions } from '@warren/inflight';
import type { Logger } from '@warren/logger';
import { jobsMethods } from './methods';

export const jobsDefaults = { name: 'jobs', prefetch: 1 } as const;

export interface JobsSettings {
  /** Time one unit of a job's `size` takes. */
  readonly stepMs: number;
  /** Deliveries of one job that may start it; the next is dead-lettered. */
  readonly maxAttempts: number;
  /** How soon a dead worker's job is taken over by another. */
  readonly leaseMs: number;
  /** Grace given to running jobs on SIGTERM before they are requeued. */
  readonly shutdownGraceMs: number;
}

export function jobsSettings(env: Env): JobsSettings {
  return {
    stepMs: envValue(env, 'JOBS_STEP_MS'),
    maxAttempts: envValue(env, 'JOBS_MAX_ATTEMPTS'),
    leaseMs: envValue(env, 'JOBS_LEASE_MS'),
    shutdownGraceMs: envValue(env, 'SHUTDOWN_GRACE_MS'),
  };
}

/** The tracker settings jobs need, whichever store the tracker uses. */
export function jobsTrackerOptions(config: Pick<ServiceEnv, 'keyPrefix'> & JobsSettings, logger: Logger): Omit<TrackerOptions, 'redis'> {
  return {
    keyPrefix: config.keyPrefix,
    maxAttempts: config.maxAttempts,
    leaseMs: config.leaseMs,
    heartbeatMs: Math.max(1, Math.min(1000, Math.floor(config.leaseMs / 3))),
    logger,
  };
}

/**
 * The jobs service's startService options. `durable: false` is for embedded mode, whose queues
 * live in memory: the service then says so (announced, and shown in GET /services) instead of
 * claiming a durable quorum queue.
 */
export function jobsService(
  config: Pick<ServiceEnv, 'namespace' | 'name' | 'prefetch' | 'instanceId'> & JobsSettings & { readonly durable?: boolean },
  deps: { readonly logger: Logger; readonly store: EventStore; readonly tracker: CallTracker; readonly status: (callId: string) => Promise<CallStatus> },
): ServiceOptions {
  const durable = config.durable ?? true;
  return {
    namespace: config.namespace,
    name: config.name,
    prefetch: config.prefetch,
    queueType: durable ? 'quorum' : 'classic',
    durable,
    shutdownGraceMs: config.shutdownGraceMs,
    tracker: deps.tracker,
    methods: jobsMethods({ store: deps.store, prefix: `${config.namespace}.${config.name}`, stepMs: config.stepMs, status: deps.status }),
    client: { persistent: durable },
    metadata: { description: 'Long-running report jobs', version: '0.1.0' },
    logger: deps.logger,
    ...(config.instanceId === undefined ? {} : { instanceId: config.instanceId }),
  };
}
