// What `warren gen` generates from: the methods and notifications of an OpenRPC document
// (what rpc.discover answers), read into one sorted model so that both printers see the same
// API and nothing about the document's order, servers or instance counts reaches the output.
import { SchemaCompiler, type JsonSchema, type JsonValue } from '@warren/jsonrpc';
import { UsageError } from '../errors';
import { intersection, typeOf, type TypeModel } from './schema-types';

/** JSON-RPC params are an array or an object, never anything else. */
const paramsDomain = ['array', 'object'] as const;

export interface ApiError {
  readonly code: number;
  readonly message: string;
}

export interface ApiMethod {
  readonly name: string;
  readonly description: string | undefined;
  readonly service: string | undefined;
  readonly params: TypeModel;
  /** The params schema accepts a call without params (checked by ajv, as the service checks them). */
  readonly paramsOptional: boolean;
  readonly result: TypeModel;
  /** The errors the document lists for it: the method's own first, then the protocol's. */
  readonly errors: readonly ApiError[];
  /** Job-style on a durable queue: publish it persistent (`x-warren-persistent`). */
  readonly persistent: boolean;
  readonly jobStyle: boolean;
}

export interface ApiNotification {
  readonly name: string;
  readonly description: string | undefined;
  /** Every service subscribed to it; its params must suit all of them. */
  readonly services: readonly string[];
  readonly params: TypeModel;
  readonly paramsOptional: boolean;
}

export interface ApiModel {
  readonly title: string;
  readonly version: string;
  readonly methods: readonly ApiMethod[];
  readonly notifications: readonly ApiNotification[];
}

type Obj = { readonly [k: string]: JsonValue };

/**
 * Reads an OpenRPC document. Warren's own (rpc.discover) carry each exact params schema in
 * `x-warren-params-schema` and notifications in `x-warren-notifications`; any other OpenRPC
 * document works from its content descriptors. Throws a UsageError naming what is wrong.
 *
 * @example apiModel(await caller.call('rpc.discover')).methods.map((m) => m.name) // ['add', ...]
 */
export function apiModel(doc: unknown): ApiModel {
  if (!isObject(doc) || typeof doc['openrpc'] !== 'string' || !Array.isArray(doc['methods'])) throw new UsageError('not an OpenRPC document: expected an object with "openrpc" and "methods"');
  const compiler = new SchemaCompiler();
  const info = isObject(doc['info']) ? doc['info'] : {};
  const methods = doc['methods'].map((m, i) => method(m, i, compiler));
  const notes = Array.isArray(doc['x-warren-notifications']) ? doc['x-warren-notifications'] : [];
  const names = new Set<string>();
  for (const m of methods) {
    if (names.has(m.name)) throw new UsageError(`the OpenRPC document lists method ${JSON.stringify(m.name)} twice`);
    names.add(m.name);
  }
  return {
    title: typeof info['title'] === 'string' ? info['title'] : 'Warren',
    version: typeof info['version'] === 'string' ? info['version'] : '0.0.0',
    methods: methods.sort((a, b) => compare(a.name, b.name)),
    notifications: notifications(notes, compiler),
  };
}

function method(raw: JsonValue, index: number, compiler: SchemaCompiler): ApiMethod {
  if (!isObject(raw) || typeof raw['name'] !== 'string' || raw['name'].length === 0) throw new UsageError(`methods[${index}] has no name`);
  const name = raw['name'];
  const schema = paramsSchema(raw, `method ${name}`);
  const result = isObject(raw['result']) ? raw['result']['schema'] : undefined;
  const errors = (Array.isArray(raw['errors']) ? raw['errors'] : []).flatMap((e) =>
    isObject(e) && Number.isInteger(e['code']) ? [{ code: e['code'] as number, message: typeof e['message'] === 'string' ? e['message'] : '' }] : [],
  );
  return {
    name,
    description: text(raw['description']) ?? text(raw['summary']),
    service: text(raw['x-warren-service']),
    params: typeOf(schema, paramsDomain),
    paramsOptional: acceptsNoParams(schema, compiler, `method ${name}`),
    result: typeOf(isSchema(result) ? result : undefined),
    errors,
    persistent: raw['x-warren-persistent'] === true,
    jobStyle: raw['x-warren-job-style'] === true,
  };
}

/** One entry per notification name: subscribers of one name each check the same params, so a sender must suit them all. */
function notifications(raw: readonly JsonValue[], compiler: SchemaCompiler): ApiNotification[] {
  const byName = new Map<string, { service: string; description: string | undefined; schema: JsonSchema | undefined }[]>();
  raw.forEach((n, i) => {
    if (!isObject(n) || typeof n['name'] !== 'string' || n['name'].length === 0) throw new UsageError(`x-warren-notifications[${i}] has no name`);
    const list = byName.get(n['name']) ?? [];
    list.push({ service: text(n['service']) ?? '', description: text(n['description']), schema: paramsSchema(n, `notification ${n['name']}`) });
    byName.set(n['name'], list);
  });
  return [...byName.entries()]
    .sort(([a], [b]) => compare(a, b))
    .map(([name, subscribers]) => {
      subscribers.sort((a, b) => compare(a.service, b.service));
      const schemas = dedupe(subscribers.flatMap((s) => (s.schema === undefined ? [] : [s.schema])));
      const params = intersection(schemas.length === 0 ? [typeOf(undefined, paramsDomain)] : schemas.map((s) => typeOf(s, paramsDomain)));
      return {
        name,
        description: subscribers.find((s) => s.description !== undefined)?.description,
        services: [...new Set(subscribers.map((s) => s.service).filter((s) => s !== ''))],
        params,
        paramsOptional: schemas.every((s) => acceptsNoParams(s, compiler, `notification ${name}`)),
      };
    });
}

/** The exact params schema, else one rebuilt from the OpenRPC content descriptors. */
function paramsSchema(entry: Obj, what: string): JsonSchema | undefined {
  const exact = entry['x-warren-params-schema'];
  if (exact !== undefined) {
    if (!isSchema(exact)) throw new UsageError(`${what}: x-warren-params-schema is not a JSON Schema`);
    return exact;
  }
  const list = Array.isArray(entry['params']) ? entry['params'].filter(isObject) : [];
  if (list.length === 0) return undefined;
  const named = list.filter((p) => typeof p['name'] === 'string');
  const schemaOf = (p: Obj): JsonSchema => (isSchema(p['schema']) ? p['schema'] : {});
  const byName: JsonSchema = {
    type: 'object',
    properties: Object.fromEntries(named.map((p) => [p['name'] as string, schemaOf(p)])),
    required: named.filter((p) => p['required'] === true).map((p) => p['name'] as string),
  };
  const required = list.findIndex((p) => p['required'] !== true);
  const byPosition: JsonSchema = { type: 'array', items: list.map(schemaOf), additionalItems: false, minItems: required === -1 ? list.length : required };
  const structure = entry['paramStructure'];
  return structure === 'by-name' ? byName : structure === 'by-position' ? byPosition : { anyOf: [byPosition, byName] };
}

function acceptsNoParams(schema: JsonSchema | undefined, compiler: SchemaCompiler, what: string): boolean {
  if (schema === undefined) return true;
  try {
    return compiler.compile(schema)(undefined).ok;
  } catch (err) {
    throw new UsageError(`${what}: its params schema does not compile (${err instanceof Error ? err.message : String(err)})`);
  }
}

function dedupe(schemas: readonly JsonSchema[]): JsonSchema[] {
  const seen = new Set<string>();
  return schemas.filter((s) => !seen.has(JSON.stringify(s)) && Boolean(seen.add(JSON.stringify(s))));
}

/** Code-point order: the same on every machine, unlike localeCompare. */
export function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function text(value: JsonValue | undefined): string | undefined {
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

function isSchema(value: JsonValue | undefined): value is JsonSchema {
  return typeof value === 'boolean' || isObject(value);
}

function isObject(value: unknown): value is Obj {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
