import type { InstanceInfo, MethodDescription, NotificationDescription, QueueType } from '@warren/amqp';
import type { JsonObject, JsonSchema } from '@warren/jsonrpc';

/** A method as the gateway knows it: its description and the service that serves it. */
export interface CatalogueMethod extends MethodDescription {
  readonly service: string;
  /** Requests should be published persistent: a job-style method on a durable queue, so they survive a RabbitMQ restart. */
  readonly persistent: boolean;
}

/** A notification some service handles, with the schema of its params if the service gave one. */
export interface CatalogueNotification extends NotificationDescription {
  /** Every instance handles it (instance event queue), rather than one instance of the service. */
  readonly perInstance: boolean;
}

/** A method exposed as an MCP tool. `inputSchema` is always an object schema, as MCP requires. */
export interface CatalogueTool {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: JsonObject & { readonly type: 'object' };
  readonly method: string;
  readonly service: string;
}

export interface ServiceSummary {
  readonly name: string;
  readonly instances: readonly InstanceInfo[];
  readonly notifications: readonly string[];
  readonly instanceNotifications: readonly string[];
  /** Both kinds, described (the newest instance's description of each name). */
  readonly notificationDetails: readonly CatalogueNotification[];
  /** The newest instance's request queue: durable, and its type. */
  readonly durable: boolean;
  readonly queueType: QueueType;
}

/**
 * Everything the live services offer, merged from their announcements: the
 * one view that rpc.discover, tools/list, /services and the metrics' method
 * labels are built from.
 */
export interface Catalogue {
  readonly services: readonly ServiceSummary[];
  /** By method name. */
  readonly methods: ReadonlyMap<string, CatalogueMethod>;
  /** By tool name. */
  readonly tools: ReadonlyMap<string, CatalogueTool>;
  /** Method names announced by more than one service: requests to them reach every such service's queue. */
  readonly conflicts: readonly string[];
}

/**
 * Builds the catalogue from live instances. When instances of one service
 * disagree (a rolling upgrade), the newest instance's description wins; when
 * two services announce the same method, the first by service name wins and
 * the name is reported in `conflicts`.
 */
export function buildCatalogue(instances: readonly InstanceInfo[]): Catalogue {
  const newestFirst = [...instances].sort((a, b) => a.service.localeCompare(b.service) || b.startedAt - a.startedAt);
  const methods = new Map<string, CatalogueMethod>();
  const tools = new Map<string, CatalogueTool>();
  const conflicts = new Set<string>();
  const services = new Map<string, { instances: InstanceInfo[]; notifications: Map<string, CatalogueNotification>; instanceNotifications: Map<string, CatalogueNotification> }>();
  for (const instance of newestFirst) {
    let summary = services.get(instance.service);
    if (!summary) {
      summary = { instances: [], notifications: new Map(), instanceNotifications: new Map() };
      services.set(instance.service, summary);
    }
    summary.instances.push(instance);
    for (const n of instance.notifications) if (!summary.notifications.has(n.name)) summary.notifications.set(n.name, { ...n, perInstance: false });
    for (const n of instance.instanceNotifications) if (!summary.instanceNotifications.has(n.name)) summary.instanceNotifications.set(n.name, { ...n, perInstance: true });
    for (const m of instance.methods) {
      const known = methods.get(m.name);
      if (known) {
        if (known.service !== instance.service) conflicts.add(m.name);
        continue;
      }
      methods.set(m.name, { ...m, service: instance.service, persistent: m.jobStyle === true && instance.durable });
      if (m.tool) {
        const name = m.tool.name ?? m.name;
        if (!tools.has(name)) tools.set(name, { name, description: m.tool.description, inputSchema: objectSchema(m.tool.inputSchema ?? m.params), method: m.name, service: instance.service });
      }
    }
  }
  return {
    services: [...services].map(([name, s]) => {
      const newest = s.instances[0];
      const byName = (a: CatalogueNotification, b: CatalogueNotification): number => a.name.localeCompare(b.name);
      return {
        name,
        instances: s.instances,
        notifications: [...s.notifications.keys()].sort(),
        instanceNotifications: [...s.instanceNotifications.keys()].sort(),
        notificationDetails: [...[...s.notifications.values()].sort(byName), ...[...s.instanceNotifications.values()].sort(byName)],
        durable: newest?.durable ?? false,
        queueType: newest?.queueType ?? 'classic',
      };
    }),
    methods,
    tools,
    conflicts: [...conflicts].sort(),
  };
}

/**
 * MCP requires a tool's input schema to describe an object (tool arguments
 * are always by name). A schema that says so is used as is; one with
 * `properties` but no `type` gets `type: 'object'`; anything else (no schema,
 * an array schema of a by-position method) becomes an open object schema,
 * and the service's own params check then has the last word.
 */
export function objectSchema(schema: JsonSchema | undefined): JsonObject & { readonly type: 'object' } {
  if (typeof schema === 'object' && schema !== null && !Array.isArray(schema)) {
    if (schema['type'] === 'object') return schema as JsonObject & { type: 'object' };
    if (schema['type'] === undefined && typeof schema['properties'] === 'object') return { ...schema, type: 'object' };
  }
  return { type: 'object' };
}
