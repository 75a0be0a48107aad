import type { JsonObject, JsonSchema, JsonValue } from '@warren/jsonrpc';

export type ParamStructure = 'by-name' | 'by-position' | 'either';

/** Longest tuple spelled out as one content descriptor per position. */
const maxSpelledOutPositions = 16;

/**
 * OpenRPC's list of named parameters, derived from a JSON-RPC params schema
 * as far as it allows. A `oneOf`/`anyOf` of an array and an object schema
 * (Warren's way of saying "by position or by name", as `add` takes `[a, b]` or
 * `{a, b}`) is `either`, listed by the object's property names in order: the
 * position of each is its place in the object's `properties`. What cannot be
 * named (variadic arrays) lists nothing; the exact schema is in
 * `x-warren-params-schema` either way.
 */
export function contentDescriptors(schema: JsonSchema | undefined): { paramStructure: ParamStructure; params: JsonValue[] } {
  if (!isObject(schema)) return { paramStructure: 'either', params: [] };
  const alternatives = Array.isArray(schema['oneOf']) ? schema['oneOf'] : Array.isArray(schema['anyOf']) ? schema['anyOf'] : [schema];
  const byName = alternatives.find(isByName);
  const byPosition = alternatives.find(isByPosition);
  if (byName && byPosition) return { paramStructure: 'either', params: named(byName) };
  if (byName && alternatives.length === 1) return { paramStructure: 'by-name', params: named(byName) };
  if (byPosition && alternatives.length === 1) return { paramStructure: 'by-position', params: positional(byPosition) };
  return { paramStructure: 'either', params: [] };
}

function isByName(s: JsonValue): s is JsonObject {
  return isObject(s) && (s['type'] === 'object' || s['type'] === undefined) && isObject(s['properties']);
}

function isByPosition(s: JsonValue): s is JsonObject {
  return isObject(s) && s['type'] === 'array';
}

function named(schema: JsonObject): JsonValue[] {
  const required = Array.isArray(schema['required']) ? schema['required'] : [];
  const properties = schema['properties'] as JsonObject;
  return Object.entries(properties).map(([name, s]) => ({ name, schema: asSchema(s), required: required.includes(name) }));
}

function positional(schema: JsonObject): JsonValue[] {
  const tuple = Array.isArray(schema['prefixItems']) ? schema['prefixItems'] : Array.isArray(schema['items']) ? schema['items'] : undefined;
  const minItems = typeof schema['minItems'] === 'number' ? schema['minItems'] : undefined;
  const maxItems = typeof schema['maxItems'] === 'number' ? schema['maxItems'] : undefined;
  const item = schema['items'];
  const fixed = minItems !== undefined && minItems === maxItems && minItems <= maxSpelledOutPositions && item !== undefined && !Array.isArray(item);
  const positions = tuple ?? (fixed ? Array.from({ length: minItems }, () => item) : []);
  return positions.map((s, i) => ({ name: positionName(s, i), schema: asSchema(s), required: i < (minItems ?? positions.length) }));
}

function asSchema(s: JsonValue): JsonSchema {
  return isObject(s) || typeof s === 'boolean' ? s : {};
}

function positionName(schema: JsonValue, index: number): string {
  return isObject(schema) && typeof schema['title'] === 'string' && schema['title'].length > 0 ? schema['title'] : `arg${index}`;
}

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
