// JSON Schema → a small type model that both printers (TypeScript, Python) read.
//
// Why not json-schema-to-typescript: it serves one language (Python needs the same reading of the
// schema, so two tools would read one schema two ways), it names types from `title`s and pulls in
// prettier and a $ref resolver for documents that never hold remote refs, and its output follows
// prettier's version. Announcements use a small, known part of JSON Schema (what TypeBox and
// hand-written schemas produce); this reads every keyword that narrows a type and says what it
// ignores: value constraints (minimum, maxLength, pattern, format...) stay run-time checks, and
// `not`, `if/then/else` and `dependencies`, which no static type here can state, widen to `unknown`.
import type { JsonSchema, JsonValue } from '@warren/jsonrpc';

/** A type, as far as a static type can say it. */
export type TypeModel =
  | { readonly kind: 'unknown' }
  | { readonly kind: 'never' }
  | { readonly kind: 'null' }
  | { readonly kind: 'boolean' }
  | { readonly kind: 'number'; readonly integer: boolean }
  | { readonly kind: 'string' }
  | { readonly kind: 'literal'; readonly value: string | number | boolean }
  | { readonly kind: 'array'; readonly items: TypeModel }
  /** Fixed positions, the first `required` of them present; `rest`: more items of that type, or none. */
  | { readonly kind: 'tuple'; readonly items: readonly TypeModel[]; readonly required: number; readonly rest: TypeModel | undefined }
  /** `extra`: the type of properties not listed, or undefined when none are allowed. */
  | { readonly kind: 'object'; readonly properties: readonly PropertyModel[]; readonly extra: TypeModel | undefined; readonly description?: string }
  | { readonly kind: 'union'; readonly of: readonly TypeModel[] }
  | { readonly kind: 'intersection'; readonly of: readonly TypeModel[] };

export interface PropertyModel {
  readonly name: string;
  readonly type: TypeModel;
  readonly required: boolean;
  readonly description?: string;
}

const unknownType: TypeModel = { kind: 'unknown' };
const jsonTypes = ['null', 'boolean', 'number', 'integer', 'string', 'array', 'object'] as const;
type JsonTypeName = (typeof jsonTypes)[number];

/** Longest bounded list written as a tuple (as OpenRPC's content descriptors spell them out). */
const maxSpelledOut = 16;

/** Deepest schema nesting read; deeper (or a $ref cycle) is `unknown`. */
const maxDepth = 32;

/**
 * The type of the values `schema` accepts. `domain` limits which JSON types an untyped schema
 * stands for: JSON-RPC params are only ever an array or an object, so `{ maxItems: 0,
 * maxProperties: 0 }` as params is `[] | {}`, not any value.
 *
 * @example typeOf({ type: 'array', items: { type: 'number' } }) // { kind: 'array', items: { kind: 'number', integer: false } }
 */
export function typeOf(schema: JsonSchema | undefined, domain: readonly JsonTypeName[] = jsonTypes): TypeModel {
  return schema === undefined ? anyOf(domain, {}, true, 0) : read(schema, schema, domain, 0);
}

function read(schema: JsonSchema, root: JsonSchema, domain: readonly JsonTypeName[], depth: number): TypeModel {
  if (schema === true) return anyOf(domain, {}, root, depth);
  if (schema === false || depth > maxDepth) return schema === false ? { kind: 'never' } : unknownType;
  const ref = schema['$ref'];
  if (typeof ref === 'string') return read(resolveRef(ref, root) ?? true, root, domain, depth + 1);
  if ('const' in schema) return literals([schema['const'] as JsonValue]);
  if (Array.isArray(schema['enum'])) return literals(schema['enum']);
  const parts: TypeModel[] = [base(schema, root, domain, depth)];
  for (const key of ['anyOf', 'oneOf'] as const) {
    const alternatives = schema[key];
    if (Array.isArray(alternatives)) parts.push(union(alternatives.map((s) => read(asSchema(s), root, domain, depth + 1))));
  }
  const all = schema['allOf'];
  if (Array.isArray(all)) parts.push(...all.map((s) => read(asSchema(s), root, domain, depth + 1)));
  return intersection(parts);
}

/** The type its `type` keyword (or, untyped, the keywords it uses) gives, before any anyOf/oneOf/allOf. */
function base(schema: { readonly [k: string]: JsonValue }, root: JsonSchema, domain: readonly JsonTypeName[], depth: number): TypeModel {
  const declared = schema['type'];
  const names = typeof declared === 'string' ? [declared] : Array.isArray(declared) ? declared.filter((t): t is string => typeof t === 'string') : undefined;
  if (names === undefined) {
    // An untyped schema that only composes others says nothing itself; its parts do.
    const composed = ['anyOf', 'oneOf', 'allOf'].some((k) => Array.isArray(schema[k]));
    return composed ? unknownType : anyOf(domain, schema, root, depth);
  }
  const known = names.filter((t): t is JsonTypeName => (jsonTypes as readonly string[]).includes(t));
  return anyOf(known.filter((t) => domain.includes(t) || (t === 'integer' && domain.includes('number'))), schema, root, depth);
}

function anyOf(names: readonly JsonTypeName[], schema: { readonly [k: string]: JsonValue }, root: JsonSchema, depth: number): TypeModel {
  // number covers integer: an untyped schema is not "number or integer" twice.
  const distinct = names.includes('number') ? names.filter((n) => n !== 'integer') : names;
  if (distinct.length === jsonTypes.length - 1) return unknownType;
  return union(distinct.map((name) => ofType(name, schema, root, depth)));
}

function ofType(name: JsonTypeName, schema: { readonly [k: string]: JsonValue }, root: JsonSchema, depth: number): TypeModel {
  switch (name) {
    case 'null':
      return { kind: 'null' };
    case 'boolean':
      return { kind: 'boolean' };
    case 'number':
    case 'integer':
      return { kind: 'number', integer: name === 'integer' };
    case 'string':
      return { kind: 'string' };
    case 'array':
      return arrayType(schema, root, depth);
    case 'object':
      return objectType(schema, root, depth);
    default: {
      const never: never = name;
      return never;
    }
  }
}

function arrayType(schema: { readonly [k: string]: JsonValue }, root: JsonSchema, depth: number): TypeModel {
  const maxItems = typeof schema['maxItems'] === 'number' ? schema['maxItems'] : undefined;
  const minItems = typeof schema['minItems'] === 'number' ? schema['minItems'] : 0;
  // Draft 2020-12 spells a tuple prefixItems (+ items for the rest); drafts 4-7 items: [...] (+ additionalItems).
  const prefix = Array.isArray(schema['prefixItems']) ? schema['prefixItems'] : Array.isArray(schema['items']) ? schema['items'] : undefined;
  const restSchema = Array.isArray(schema['prefixItems']) ? schema['items'] : Array.isArray(schema['items']) ? schema['additionalItems'] : schema['items'];
  const child = (s: JsonValue | undefined): TypeModel => (s === undefined ? unknownType : read(asSchema(s), root, jsonTypes, depth + 1));
  if (prefix === undefined) {
    const items = child(restSchema);
    // A short bounded list reads better, and checks more, as a tuple: `{ maxItems: 1 }` of numbers is `[number?]`.
    if (maxItems !== undefined && maxItems <= maxSpelledOut) return { kind: 'tuple', items: Array.from({ length: maxItems }, () => items), required: Math.min(minItems, maxItems), rest: undefined };
    return { kind: 'array', items };
  }
  const closed = restSchema === false || (maxItems !== undefined && maxItems <= prefix.length);
  const items = prefix.slice(0, maxItems ?? prefix.length).map(child);
  return { kind: 'tuple', items, required: Math.min(minItems, items.length), rest: closed ? undefined : child(restSchema) };
}

function objectType(schema: { readonly [k: string]: JsonValue }, root: JsonSchema, depth: number): TypeModel {
  const properties = isObject(schema['properties']) ? schema['properties'] : {};
  const required = Array.isArray(schema['required']) ? schema['required'] : [];
  const extraSchema = schema['additionalProperties'];
  const closed = extraSchema === false || schema['maxProperties'] === 0 || schema['unevaluatedProperties'] === false;
  return {
    kind: 'object',
    // Sorted by name: the schema's key order is not part of its meaning, so it must not move the output.
    properties: Object.keys(properties)
      .sort()
      .map((name) => {
        const s = asSchema(properties[name] as JsonValue);
        const description = isObject(s) && typeof s['description'] === 'string' ? s['description'] : undefined;
        return { name, type: read(s, root, jsonTypes, depth + 1), required: required.includes(name), ...(description === undefined ? {} : { description }) };
      }),
    extra: closed ? undefined : extraSchema === undefined || extraSchema === true ? unknownType : read(asSchema(extraSchema), root, jsonTypes, depth + 1),
  };
}

function literals(values: readonly JsonValue[]): TypeModel {
  return union(
    values.map((v): TypeModel => (v === null ? { kind: 'null' } : typeof v === 'object' ? unknownType : { kind: 'literal', value: v })),
  );
}

/** A union, flattened, without repeats; `unknown` absorbs everything, `never` drops out. */
export function union(types: readonly TypeModel[]): TypeModel {
  const flat = dedupe(types.flatMap((t) => (t.kind === 'union' ? t.of : [t])).filter((t) => t.kind !== 'never'));
  if (flat.some((t) => t.kind === 'unknown')) return unknownType;
  return flat.length === 0 ? { kind: 'never' } : flat.length === 1 ? (flat[0] as TypeModel) : { kind: 'union', of: flat };
}

/** An intersection, flattened; `unknown` drops out, `never` wins. */
export function intersection(types: readonly TypeModel[]): TypeModel {
  const flat = dedupe(types.flatMap((t) => (t.kind === 'intersection' ? t.of : [t])).filter((t) => t.kind !== 'unknown'));
  if (flat.some((t) => t.kind === 'never')) return { kind: 'never' };
  return flat.length === 0 ? unknownType : flat.length === 1 ? (flat[0] as TypeModel) : { kind: 'intersection', of: flat };
}

function dedupe(types: readonly TypeModel[]): TypeModel[] {
  const seen = new Set<string>();
  return types.filter((t) => {
    const key = JSON.stringify(t);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** A local `#/...` JSON pointer into the schema itself; anything else (a remote ref) is not followed. */
function resolveRef(ref: string, root: JsonSchema): JsonSchema | undefined {
  if (ref === '#') return root;
  if (!ref.startsWith('#/')) return undefined;
  let at: JsonValue = root;
  for (const raw of ref.slice(2).split('/')) {
    const key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    if (!isObject(at) || !(key in at)) return undefined;
    at = at[key] as JsonValue;
  }
  return isObject(at) || typeof at === 'boolean' ? at : undefined;
}

function asSchema(s: JsonValue): JsonSchema {
  return isObject(s) || typeof s === 'boolean' ? s : true;
}

function isObject(value: unknown): value is { readonly [k: string]: JsonValue } {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
