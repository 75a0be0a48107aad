// The audit service's handlers: one per notification it subscribes to, each
// recording what it received, and a query method to read the record back.
// They see an EventStore (Redis in main.ts, memory in unit tests), never Redis.
import type { HandlerContext, ServiceMethod, ServiceNotification } from '@warren/amqp';
import type { Json, EventStore } from '@warren/eventlog';
import type { JsonSchema, JsonValue } from '@warren/jsonrpc';

/** The notifications the examples send (docs/services.md). */
export const auditedNotifications = ['logMessage', 'notifyEvent', 'update', 'notify_hello', 'notify_sum'] as const;
export type AuditedNotification = (typeof auditedNotifications)[number];

/** What is recorded for each notification received. */
export interface AuditEntry {
  /** ms since the epoch, when this instance handled it. */
  readonly at: number;
  readonly method: string;
  /** The params as sent; null when there were none. */
  readonly params: JsonValue;
  /** The subscribing service (several services each get every notification). */
  readonly service: string;
  readonly instanceId: string;
  /** The AMQP message id Warren gave the notification. */
  readonly callId: string;
  readonly traceparent: string;
}

/** Absent params, or any array/object of a sane size. `maxItems`/`maxProperties` ignore other types, so absent passes. */
const anyParams: JsonSchema = { maxItems: 1000, maxProperties: 1000 };
const schemas: Record<AuditedNotification, JsonSchema> = {
  logMessage: {
    oneOf: [
      { type: 'array', items: { type: 'string' }, minItems: 1, maxItems: 10 },
      { type: 'object', properties: { message: { type: 'string' }, level: { enum: ['debug', 'info', 'warn', 'error'] } }, required: ['message'] },
    ],
  },
  notifyEvent: anyParams,
  update: anyParams,
  notify_hello: { type: 'array', maxItems: 100 },
  notify_sum: { type: 'array', items: { type: 'number' }, maxItems: 10_000 },
};

export interface AuditOptions {
  /** Where entries go. */
  readonly store: EventStore;
  /** The stream this service writes: one per namespace and service name, so two subscribers keep separate records. */
  readonly stream: string;
}

/** The subscribed notifications, each recording and logging what it received. */
export function auditNotifications(o: AuditOptions): Record<AuditedNotification, ServiceNotification> {
  const record = async (params: unknown, ctx: HandlerContext): Promise<void> => {
    const entry: AuditEntry = {
      at: Date.now(),
      method: ctx.method,
      params: (params ?? null) as JsonValue,
      service: ctx.service,
      instanceId: ctx.instanceId,
      callId: ctx.callId,
      traceparent: ctx.traceparent,
    };
    // Params stay out of the log line (they may hold anything); the store has them.
    ctx.log.info({ notification: ctx.method, paramsBytes: JSON.stringify(entry.params).length }, 'notification received');
    await o.store.append(o.stream, entry as unknown as Json);
  };
  return Object.fromEntries(
    auditedNotifications.map((name) => [name, { description: `Recorded by the audit service (${name}).`, params: schemas[name], handler: record }]),
  ) as Record<AuditedNotification, ServiceNotification>;
}

export interface RecentParams {
  /** Most entries to return, newest first. @default 20 */
  readonly limit?: number;
  /** Only entries of this notification. */
  readonly method?: string;
}

const recentParams: JsonSchema = {
  oneOf: [
    { type: 'object', properties: { limit: { type: 'integer', minimum: 1, maximum: 1000 }, method: { type: 'string', maxLength: 255 } }, additionalProperties: false },
    { type: 'array', items: [{ type: 'integer', minimum: 1, maximum: 1000 }], maxItems: 1 },
  ],
};

/**
 * `<service>.recent`: what this service recorded, newest first. Named after
 * the service so that two subscribers (audit, notifier) each answer for
 * their own record instead of both answering the same method.
 *
 * @example await client.call('audit.recent', { limit: 5, method: 'notify_sum' })
 */
export function auditMethods(service: string, o: AuditOptions): Record<string, ServiceMethod> {
  return {
    [`${service}.recent`]: {
      description: `Notifications the ${service} service received, newest first: { limit?, method? } or [limit].`,
      params: { anyOf: [recentParams, { maxItems: 0, maxProperties: 0 }] },
      result: { type: 'array', items: { type: 'object' } },
      handler: async (params) => {
        const p: RecentParams = Array.isArray(params) ? (params[0] === undefined ? {} : { limit: params[0] as number }) : ((params ?? {}) as RecentParams);
        const limit = p.limit ?? 20;
        if (p.method === undefined) return (await o.store.recent(o.stream, limit)) as JsonValue;
        // Filtering reads the whole capped list; it is small by construction.
        const all = (await o.store.recent(o.stream, 1000)) as unknown as AuditEntry[];
        return all.filter((e) => e.method === p.method).slice(0, limit) as unknown as JsonValue;
      },
    },
  };
}
