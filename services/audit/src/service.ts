// What the audit service is, apart from where it connects and stores: the options its main
// (RabbitMQ + Redis) and embedded mode (scripts/embedded.ts, in memory) both pass to startService.
import type { ServiceEnv, ServiceOptions } from '@warren/amqp';
import { envValue, type Env } from '@warren/config';
import type { EventStore } from '@warren/eventlog';
import type { Logger } from '@warren/logger';
import { auditMethods, auditNotifications } from './methods';

export const auditDefaults = { name: 'audit', prefetch: 32 } as const;

/** The audit service's own settings, from the environment. */
export function auditSettings(env: Env): { readonly maxEntries: number; readonly ttlMs: number } {
  return {
    /** Most entries kept per service. */
    maxEntries: envValue(env, 'AUDIT_MAX_ENTRIES'),
    /** How long the record lives after the last notification. */
    ttlMs: envValue(env, 'AUDIT_TTL_MS'),
  };
}

/** The audit service's startService options over `store` (Redis or memory). */
export function auditService(config: Pick<ServiceEnv, 'namespace' | 'name' | 'prefetch' | 'instanceId'>, deps: { readonly logger: Logger; readonly store: EventStore; readonly description?: string }): ServiceOptions {
  const audit = { store: deps.store, stream: `${config.namespace}.${config.name}` };
  return {
    namespace: config.namespace,
    name: config.name,
    prefetch: config.prefetch,
    notifications: auditNotifications(audit),
    methods: auditMethods(config.name, audit),
    // Defined in code, announced, kept by the broker's scheduler (docs/scheduling.md, "Schedules in
    // code"): a daily read of the newest entry, harmless, so the Scheduled view shows where it came from.
    schedules: [{ name: `${config.name}.daily-check`, method: `${config.name}.recent`, params: { limit: 1 }, cron: '0 3 * * *', timezone: 'UTC' }],
    metadata: { description: deps.description ?? 'Records notifications to Redis', version: '0.1.0' },
    logger: deps.logger,
    ...(config.instanceId === undefined ? {} : { instanceId: config.instanceId }),
  };
}
