import Ajv, { type ValidateFunction } from 'ajv';
import { describeFailures } from './schema-failures';
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
  // verbose: a failure carries its schema, so a union of constants can say the values it allows (schema-failures.ts).
  private readonly ajv = new Ajv({ strict: false, allErrors: true, verbose: true });

  compile(schema: JsonSchema): ParamsCheck {
    const validate: ValidateFunction = this.ajv.compile(schema);
    return (params) => (validate(params) ? { ok: true } : { ok: false, details: describeFailures(validate.errors ?? []) });
  }
}
