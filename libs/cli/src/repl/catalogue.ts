// What the REPL completes from: the live methods and notifications with the names of their
// params, read from an OpenRPC document (`rpc.discover`) or from the services' announcements.
// Pure: no I/O here (discover.ts fetches), so completion is testable on plain data.
import type { InstanceInfo } from '@warren/amqp';

/** One callable method (or notification) as the REPL knows it. */
export interface CatalogueEntry {
  readonly name: string;
  /** Names of its params by name (object properties), in schema order; empty when it takes them by position only. */
  readonly params: readonly string[];
  readonly description?: string;
  readonly service?: string;
}

/** Everything completion and `methods` show; `source` says where it came from. */
export interface Catalogue {
  readonly source: 'rpc.discover' | 'announcements' | 'none';
  readonly methods: readonly CatalogueEntry[];
  readonly notifications: readonly CatalogueEntry[];
  readonly services: readonly string[];
}

export const emptyCatalogue: Catalogue = { source: 'none', methods: [], notifications: [], services: [] };

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const text = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/**
 * The by-name param names a JSON Schema allows: the properties of an object schema, or of every
 * object branch of a `oneOf`/`anyOf` (`add` takes `[a, b]` or `{a, b}`: `a`, `b`), without repeats.
 *
 * @example paramNames({ type: 'object', properties: { minuend: {}, subtrahend: {} } }) // ['minuend', 'subtrahend']
 */
export function paramNames(schema: unknown): string[] {
  if (!isObject(schema)) return [];
  const names = isObject(schema['properties']) ? Object.keys(schema['properties']) : [];
  for (const key of ['oneOf', 'anyOf', 'allOf'] as const) {
    const branches = schema[key];
    if (Array.isArray(branches)) for (const b of branches) names.push(...paramNames(b));
  }
  return [...new Set(names)];
}

function entry(name: string, params: readonly string[], description: unknown, service: unknown): CatalogueEntry {
  const d = text(description);
  const s = text(service);
  return { name, params, ...(d === undefined ? {} : { description: d }), ...(s === undefined ? {} : { service: s }) };
}

/** Names of OpenRPC content descriptors; the exact schema (`x-warren-params-schema`) wins when it names object properties. */
function descriptorNames(m: Json): string[] {
  const exact = paramNames(m['x-warren-params-schema']);
  if (exact.length > 0) return exact;
  // By-position descriptors (`arg0`, …) cannot be passed by name; only by-name or either ones are offered.
  if (m['paramStructure'] === 'by-position') return [];
  return Array.isArray(m['params']) ? m['params'].flatMap((p) => (isObject(p) && text(p['name']) !== undefined ? [p['name'] as string] : [])) : [];
}

const byName = (a: CatalogueEntry, b: CatalogueEntry): number => a.name.localeCompare(b.name);

/** The catalogue of an OpenRPC document as `rpc.discover` answers it (docs/gateway.md, "Discovery"). */
export function fromOpenRpc(doc: unknown): Catalogue {
  if (!isObject(doc)) return emptyCatalogue;
  const methods = (Array.isArray(doc['methods']) ? doc['methods'] : []).filter(isObject).flatMap((m) => (text(m['name']) === undefined ? [] : [entry(m['name'] as string, descriptorNames(m), m['description'] ?? m['summary'], m['x-warren-service'])]));
  const notifications = (Array.isArray(doc['x-warren-notifications']) ? doc['x-warren-notifications'] : []).filter(isObject).flatMap((n) => (text(n['name']) === undefined ? [] : [entry(n['name'] as string, descriptorNames(n), n['description'], n['service'])]));
  const services = (Array.isArray(doc['x-warren-services']) ? doc['x-warren-services'] : []).filter(isObject).flatMap((s) => (text(s['name']) === undefined ? [] : [s['name'] as string]));
  return { source: 'rpc.discover', methods: methods.sort(byName), notifications: dedupe(notifications).sort(byName), services: [...new Set(services)].sort() };
}

/** The catalogue of the instances heard announcing (no broker answering `rpc.discover`); the newest instance of a service wins. */
export function fromAnnouncements(instances: readonly InstanceInfo[]): Catalogue {
  const newestFirst = [...instances].sort((a, b) => b.startedAt - a.startedAt);
  const methods = new Map<string, CatalogueEntry>();
  const notifications = new Map<string, CatalogueEntry>();
  for (const i of newestFirst) {
    for (const m of i.methods) if (!methods.has(m.name)) methods.set(m.name, entry(m.name, paramNames(m.params), m.description, i.service));
    for (const n of [...i.notifications, ...i.instanceNotifications]) if (!notifications.has(n.name)) notifications.set(n.name, entry(n.name, paramNames(n.params), n.description, i.service));
  }
  return { source: 'announcements', methods: [...methods.values()].sort(byName), notifications: [...notifications.values()].sort(byName), services: [...new Set(instances.map((i) => i.service))].sort() };
}

/** Several services may handle one notification: one entry per name. */
function dedupe(entries: readonly CatalogueEntry[]): CatalogueEntry[] {
  const seen = new Map<string, CatalogueEntry>();
  for (const e of entries) if (!seen.has(e.name)) seen.set(e.name, e);
  return [...seen.values()];
}
