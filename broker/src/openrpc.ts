import { ErrorCode, errorMessages, type JsonObject, type JsonValue, type KnownErrorCode } from '@warren/jsonrpc';
import type { Catalogue, CatalogueMethod } from './catalogue';
import { contentDescriptors } from './openrpc-params';

export { contentDescriptors } from './openrpc-params';

/** The OpenRPC version the documents follow. */
export const openRpcVersion = '1.3.2';

/** An OpenRPC server object: where the methods can be called. */
export interface OpenRpcServer {
  readonly name: string;
  /** An absolute URI. */
  readonly url: string;
  readonly summary?: string;
  readonly description?: string;
  /** `x-` extensions, e.g. the namespace and exchange of an AMQP server. */
  readonly extensions?: Readonly<Record<`x-${string}`, JsonValue>>;
}

export interface OpenRpcInfo {
  /** @default 'Warren' */
  readonly title?: string;
  /** @default '0.1.0' */
  readonly version?: string;
  /** The document's `servers`; when set, replaces the ones the broker works out (useful behind a proxy). @default the gateway's /rpc URL and RabbitMQ */
  readonly servers?: readonly OpenRpcServer[];
}

/** Errors any relayed call may answer, whatever its method: the transport's, not the method's. */
const transportErrors: readonly KnownErrorCode[] = [ErrorCode.DeadlineExceeded, ErrorCode.ServiceUnavailable, ErrorCode.Cancelled, ErrorCode.Overloaded, ErrorCode.InternalError];

/**
 * The merged OpenRPC document of every live service: what `rpc.discover`
 * answers. Each method lists its params as content descriptors (see
 * `contentDescriptors`), its result schema, the errors it may answer (its
 * own, as announced, and the protocol's), and is tagged with its service; it
 * keeps its exact params schema in `x-warren-params-schema`, because
 * JSON-RPC params schemas (a `oneOf` of by-position and by-name, variadic
 * arrays) do not always fit OpenRPC's list. Notifications, which OpenRPC has
 * no place for, are in `x-warren-notifications`. The document validates
 * against the OpenRPC meta-schema.
 *
 * @example
 * const doc = openRpcDocument(buildCatalogue(registry.list()), { servers: [{ name: 'gateway', url: 'http://127.0.0.1:18001/rpc' }] });
 */
export function openRpcDocument(catalogue: Catalogue, info: OpenRpcInfo = {}): JsonObject {
  const methods = [...catalogue.methods.values()].sort((a, b) => a.name.localeCompare(b.name)).map(methodObject);
  return {
    openrpc: openRpcVersion,
    info: {
      title: info.title ?? 'Warren',
      version: info.version ?? '0.1.0',
      description: 'Every method served by the live Warren services, merged from their announcements.',
    },
    ...(info.servers === undefined || info.servers.length === 0 ? {} : { servers: info.servers.map(serverObject) }),
    methods,
    'x-warren-services': catalogue.services.map((s) => ({
      name: s.name,
      // The broker (it announces metadata.role): `warren gen` leaves its operator methods out unless asked.
      ...(s.instances.some((i) => i.metadata['role'] === 'broker') ? { role: 'broker' } : {}),
      instances: s.instances.length,
      methods: [...catalogue.methods.values()].filter((m) => m.service === s.name).map((m) => m.name).sort(),
      notifications: [...s.notifications],
      instanceNotifications: [...s.instanceNotifications],
      durable: s.durable,
      queueType: s.queueType,
    })),
    'x-warren-notifications': catalogue.services.flatMap((s) =>
      s.notificationDetails.map((n) => {
        const { paramStructure, params } = contentDescriptors(n.params);
        return {
          name: n.name,
          service: s.name,
          perInstance: n.perInstance,
          ...(n.description === undefined ? {} : { description: n.description }),
          paramStructure,
          params,
          ...(n.params === undefined ? {} : { 'x-warren-params-schema': n.params }),
        };
      }),
    ),
    ...(catalogue.conflicts.length === 0 ? {} : { 'x-warren-conflicts': [...catalogue.conflicts] }),
  };
}

function methodObject(m: CatalogueMethod): JsonObject {
  const { paramStructure, params } = contentDescriptors(m.params);
  return {
    name: m.name,
    ...(m.description === undefined ? {} : { description: m.description }),
    tags: [{ name: m.service }],
    paramStructure,
    params,
    result: { name: `${m.name}.result`, schema: m.result ?? {} },
    errors: methodErrors(m),
    'x-warren-service': m.service,
    'x-warren-job-style': m.jobStyle === true,
    'x-warren-persistent': m.persistent,
    ...(m.params === undefined ? {} : { 'x-warren-params-schema': m.params }),
    ...(m.tool === undefined ? {} : { 'x-warren-tool': { name: m.tool.name ?? m.name, description: m.tool.description } }),
  };
}

/** The method's own errors first, then the protocol's it may answer; one entry per code (the method's wording wins). */
function methodErrors(m: CatalogueMethod): JsonValue[] {
  const protocol: KnownErrorCode[] = [...(m.params === undefined ? [] : [ErrorCode.InvalidParams]), ...transportErrors, ...(m.jobStyle === true ? [ErrorCode.WorkerLost] : [])];
  const errors = new Map<number, JsonObject>();
  for (const e of m.errors ?? []) if (!errors.has(e.code)) errors.set(e.code, { code: e.code, message: e.message });
  for (const code of protocol) if (!errors.has(code)) errors.set(code, { code, message: errorMessages[code] });
  return [...errors.values()];
}

function serverObject(s: OpenRpcServer): JsonObject {
  return {
    name: s.name,
    url: s.url,
    ...(s.summary === undefined ? {} : { summary: s.summary }),
    ...(s.description === undefined ? {} : { description: s.description }),
    ...s.extensions,
  };
}
