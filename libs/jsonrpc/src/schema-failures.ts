import type { ErrorObject as AjvErrorObject } from 'ajv';
import type { JsonObject, JsonValue } from './types';

/** At most this many failures go back in -32602's `data`. */
const maxFailures = 20;
/** At most this many allowed values are spelt out in a failure's message (`allowed` holds them all). */
const maxShown = 10;

/**
 * The parts of ajv's errors a caller can act on, in plain JSON: `{path, keyword, message}`, and for a
 * value that must be one of a few (`enum`, `const`, or an `anyOf`/`oneOf` whose every branch is a
 * `const` or `enum`, which is what TypeBox's `Type.Union([Type.Literal(...)])` writes) the values it
 * may take, in `allowed` and in the message (`must be one of "red", "green"`), instead of ajv's
 * `must be equal to constant` once per branch. Needs ajv's `verbose` (the branch schemas); runs only
 * for params that failed.
 */
export function describeFailures(errors: readonly AjvErrorObject[]): JsonValue {
  const folded = new Set<AjvErrorObject>();
  const unions = new Map<AjvErrorObject, JsonValue[]>();
  for (const e of errors) {
    if (e.keyword !== 'anyOf' && e.keyword !== 'oneOf') continue;
    const allowed = choicesOf(e.schema);
    if (!allowed) continue;
    unions.set(e, allowed);
    for (const branch of errors) if (branch.instancePath === e.instancePath && branch.schemaPath.startsWith(`${e.schemaPath}/`)) folded.add(branch);
  }
  return errors
    .filter((e) => !folded.has(e))
    .slice(0, maxFailures)
    .map((e) => {
      const allowed = unions.get(e) ?? allowedOf(e);
      const failure = { path: e.instancePath, keyword: e.keyword, message: e.message ?? 'is invalid' };
      return allowed ? { ...failure, message: oneOf(allowed), allowed } : failure;
    });
}

/** The values an `enum` or `const` failure allows; undefined for any other keyword. */
function allowedOf(e: AjvErrorObject): JsonValue[] | undefined {
  if (e.keyword === 'enum' && Array.isArray(e.params['allowedValues'])) return e.params['allowedValues'] as JsonValue[];
  if (e.keyword === 'const' && 'allowedValue' in e.params) return [e.params['allowedValue'] as JsonValue];
  return undefined;
}

/** The values an `anyOf`/`oneOf` allows when each of its branches is a `const` or an `enum`; else undefined. */
function choicesOf(branches: unknown): JsonValue[] | undefined {
  if (!Array.isArray(branches) || branches.length === 0) return undefined;
  const values: JsonValue[] = [];
  for (const branch of branches as unknown[]) {
    if (typeof branch !== 'object' || branch === null) return undefined;
    const b = branch as JsonObject;
    if ('const' in b) values.push(b['const'] as JsonValue);
    else if (Array.isArray(b['enum'])) values.push(...b['enum']);
    else return undefined;
  }
  return values;
}

function oneOf(allowed: readonly JsonValue[]): string {
  if (allowed.length === 1) return `must be ${JSON.stringify(allowed[0])}`;
  const shown = allowed.slice(0, maxShown).map((v) => JSON.stringify(v)).join(', ');
  return `must be one of ${shown}${allowed.length > maxShown ? `, … (${allowed.length} in all)` : ''}`;
}
