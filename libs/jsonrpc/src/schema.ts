import Ajv, { type ErrorObject as AjvErrorObject, type ValidateFunction } from 'ajv';
import type { JsonObject, JsonValue } from './types';

/** A JSON Schema (draft-07 vocabulary, as ajv 8 reads it by default). */
export type JsonSchema = JsonObject | boolean;

export type ParamsCheck = (params: unknown) => { readonly ok: true } | { readonly ok: false; readonly details: JsonValue };

/**
 * Compiles JSON Schemas for params. One instance per dispatcher, so nothing is
 * shared at module level. `strict: false` because tool schemas written for MCP
 * clients carry keywords (titles, examples, vendor extensions) ajv would refuse.
 */
export class SchemaCompiler {
  private readonly ajv = new Ajv({ strict: false, allErrors: true });

  compile(schema: JsonSchema): ParamsCheck {
    const validate: ValidateFunction = this.ajv.compile(schema);
    return (params) => (validate(params) ? { ok: true } : { ok: false, details: describe(validate.errors ?? []) });
  }
}

/** The parts of ajv's errors a caller can act on, in plain JSON. */
function describe(errors: readonly AjvErrorObject[]): JsonValue {
  return errors.slice(0, 20).map((e) => ({ path: e.instancePath, keyword: e.keyword, message: e.message ?? 'is invalid' }));
}
