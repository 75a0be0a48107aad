import type { JsonObject, JsonSchema, JsonValue } from '@warren/jsonrpc';
import type { Catalogue, CatalogueMethod } from './catalogue';

/** The OpenRPC version the documents follow. */
export const openRpcVersion = '1.3.2';

export interface OpenRpcInfo {
  /** @default 'Warren' */
  readonly title?: string;
  /** @default '0.1.0' */
  readonly version?: string;
}

/** Longest tuple spelled out as one content descriptor per position. */
const maxSpelledOutPositions = 16;

/**
 * The merged OpenRPC document of every live service: what `rpc.discover`
 * answers. Each method is tagged with its service and keeps its exact params
 * schema in `x-warren-params-schema`, because JSON-RPC params schemas (a
 * `oneOf` of by-position and by-name, variadic arrays) do not always fit
 * OpenRPC's list of named parameters. The document itself validates against
 * the OpenRPC meta-schema.
 *
 * @example
 * const doc = openRpcDocument(buildCatalogue(registry.list()));
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
    methods,
    'x-warren-services': catalogue.services.map((s) => ({
      name: s.name,
      instances: s.instances.length,
      methods: [...catalogue.methods.values()].filter((m) => m.service === s.name).map((m) => m.name).sort(),
      notifications: [...s.notifications],
      instanceNotifications: [...s.instanceNotifications],
    })),
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
    result: { name: 'result', schema: m.result ?? {} },
    'x-warren-service': m.service,
    ...(m.params === undefined ? {} : { 'x-warren-params-schema': m.params }),
    ...(m.tool === undefined ? {} : { 'x-warren-tool': { name: m.tool.name ?? m.name, description: m.tool.description } }),
  };
}

/** OpenRPC's named parameters, derived from a JSON-RPC params schema as far as it allows. */
export function contentDescriptors(schema: JsonSchema | undefined): { paramStructure: 'by-name' | 'by-position' | 'either'; params: JsonValue[] } {
  if (!isObject(schema)) return { paramStructure: 'either', params: [] };
  const properties = schema['properties'];
  if ((schema['type'] === 'object' || schema['type'] === undefined) && isObject(properties)) {
    const required = Array.isArray(schema['required']) ? schema['required'] : [];
    return {
      paramStructure: 'by-name',
      params: Object.entries(properties).map(([name, s]) => ({ name, schema: s, required: required.includes(name) })),
    };
  }
  if (schema['type'] === 'array') {
    const tuple = Array.isArray(schema['prefixItems']) ? schema['prefixItems'] : Array.isArray(schema['items']) ? schema['items'] : undefined;
    const minItems = typeof schema['minItems'] === 'number' ? schema['minItems'] : undefined;
    const maxItems = typeof schema['maxItems'] === 'number' ? schema['maxItems'] : undefined;
    const item = schema['items'];
    const positions: JsonValue[] | undefined = tuple ?? (minItems !== undefined && minItems === maxItems && minItems <= maxSpelledOutPositions && item !== undefined && !Array.isArray(item) ? Array.from({ length: minItems }, () => item) : undefined);
    if (positions) {
      return {
        paramStructure: 'by-position',
        params: positions.map((s, i) => ({ name: positionName(s, i), schema: isObject(s) || typeof s === 'boolean' ? s : {}, required: i < (minItems ?? positions.length) })),
      };
    }
    return { paramStructure: 'by-position', params: [] };
  }
  return { paramStructure: 'either', params: [] };
}

function positionName(schema: JsonValue, index: number): string {
  return isObject(schema) && typeof schema['title'] === 'string' && schema['title'].length > 0 ? schema['title'] : `arg${index}`;
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
