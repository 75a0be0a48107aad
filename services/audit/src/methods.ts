// The audit service's handlers: one per notification it subscribes to, each
// recording what it received, and a query method to read the record back.
// They see an EventStore (Redis in main.ts, memory in unit tests), never Redis.
import { Type, type Static } from '@sinclair/typebox';
import { defineMethod, defineNotification, NoParams, type HandlerContext, type ServiceMethod, type ServiceNotification } from '@warren/amqp';
import type { EventStore } from '@warren/eventlog';
import type { JsonValue, Params } from '@warren/jsonrpc';

/** The notifications the examples send (docs/services.md). */
export const auditedNotifications = ['logMessage', 'notifyEvent', 'update', 'notify_hello', 'notify_sum'] as const;
export type AuditedNotification = (typeof auditedNotifications)[number];

/** What is recorded for each notification received: a type alias rather than an interface, so it is plain JSON to the store. */
export type AuditEntry = {
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
};

/** Absent params, or any array/object of a sane size. `maxItems`/`maxProperties` ignore other types, so absent passes. */
const anyParams = Type.Unsafe<Params | undefined>({ maxItems: 1000, maxProperties: 1000 });
const logLevel = Type.Union(['debug', 'info', 'warn', 'error'].map((level) => Type.Literal(level)));
const schemas = {
  logMessage: Type.Union([Type.Array(Type.String(), { minItems: 1, maxItems: 10 }), Type.Object({ message: Type.String(), level: Type.Optional(logLevel) })]),
  notifyEvent: anyParams,
  update: anyParams,
  notify_hello: Type.Unsafe<JsonValue[]>({ type: 'array', maxItems: 100 }),
  notify_sum: Type.Array(Type.Number(), { maxItems: 10_000 }),
};

export interface AuditOptions {
  /** Where entries go. */
  readonly store: EventStore;
  /** The stream this service writes: one per namespace and service name, so two subscribers keep separate records. */
  readonly stream: string;
}

/** The subscribed notifications, each recording and logging what it received. */
export function auditNotifications(o: AuditOptions): Record<AuditedNotification, ServiceNotification> {
  const record = async (params: Params | undefined, ctx: HandlerContext): Promise<void> => {
    const entry: AuditEntry = {
      at: Date.now(),
      method: ctx.method,
      params: params ?? null,
      service: ctx.service,
      instanceId: ctx.instanceId,
      callId: ctx.callId,
      traceparent: ctx.traceparent,
    };
    // Params stay out of the log line (they may hold anything); the store has them.
    ctx.log.info({ notification: ctx.method, paramsBytes: JSON.stringify(entry.params).length }, 'notification received');
    await o.store.append(o.stream, entry);
  };
  const described = (name: AuditedNotification) => ({ description: `Recorded by the audit service (${name}).`, params: schemas[name] });
  return {
    logMessage: defineNotification(described('logMessage'), record),
    notifyEvent: defineNotification(described('notifyEvent'), record),
    update: defineNotification(described('update'), record),
    notify_hello: defineNotification(described('notify_hello'), record),
    notify_sum: defineNotification(described('notify_sum'), record),
  };
}

const recentByName = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, description: 'Most entries to return, newest first. Default 20.' })),
    method: Type.Optional(Type.String({ maxLength: 255, description: 'Only entries of this notification.' })),
  },
  { additionalProperties: false },
);
/** `{ limit?, method? }`, `[limit]`, `[]` or nothing. */
const recentParams = Type.Union([recentByName, Type.Array(Type.Integer({ minimum: 1, maximum: 1000 }), { maxItems: 1 }), NoParams]);
export type RecentParams = Static<typeof recentByName>;

/**
 * `<service>.recent`: what this service recorded, newest first. Named after
 * the service so that two subscribers (audit, notifier) each answer for
 * their own record instead of both answering the same method.
 *
 * @example await client.call('audit.recent', { limit: 5, method: 'notify_sum' })
 */
export function auditMethods(service: string, o: AuditOptions): Record<string, ServiceMethod> {
  return {
    [`${service}.recent`]: defineMethod(
      {
        description: `Notifications the ${service} service received, newest first: { limit?, method? } or [limit].`,
        params: recentParams,
        // Entries as stored; `unknown` because the store hands back plain JSON.
        result: Type.Array(Type.Unsafe<unknown>({ type: 'object' })),
      },
      async (params) => {
        const p: RecentParams = params === undefined ? {} : Array.isArray(params) ? (params[0] === undefined ? {} : { limit: params[0] }) : params;
        const limit = p.limit ?? 20;
        if (p.method === undefined) return o.store.recent(o.stream, limit);
        // Filtering reads the whole capped list; it is small by construction.
        const all = (await o.store.recent(o.stream, 1000)) as unknown as AuditEntry[];
        return all.filter((e) => e.method === p.method).slice(0, limit);
      },
    ),
  };
}
