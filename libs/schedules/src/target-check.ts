import { SchemaCompiler, type JsonSchema, type JsonValue } from '@warren/jsonrpc';
import type { ScheduleInput } from './spec';

/**
 * What `schedule.add` reads of the live services (the broker's catalogue of announcements): the
 * method as some running instance serves it (with its params schema, if it gave one), or
 * undefined when nobody serves it now.
 */
export type ServedMethods = (method: string) => { readonly params?: JsonSchema } | undefined;

/** Why the method a schedule would call was refused (answered as -32602 with this as `data`). */
export type TargetRefusal =
  | { readonly reason: 'method_not_served'; readonly method: string }
  | { readonly reason: 'params_rejected'; readonly method: string; readonly details: JsonValue };

/**
 * Checks that a new schedule's method is served and that its params fit the method's params
 * schema, as its calls would be checked when they fire: a schedule that would fail every run is
 * refused when it is added, not found out at 2 a.m. `allowUnserved` accepts a method nobody serves
 * yet (a service deployed after its schedule); its params are then not checked (no schema known).
 *
 * @example
 * checkTarget({ name: 'n', method: 'add', params: [1, 'x'], everyMs: 1000 }, served, false);
 * // → { reason: 'params_rejected', method: 'add', details: [{ path: '/1', keyword: 'type', message: 'must be number' }] }
 */
export function checkTarget(input: ScheduleInput, served: ServedMethods, allowUnserved: boolean): TargetRefusal | undefined {
  const method = served(input.method);
  if (method === undefined) return allowUnserved ? undefined : { reason: 'method_not_served', method: input.method };
  if (method.params === undefined) return undefined;
  const verdict = new SchemaCompiler().compile(method.params)(input.params);
  return verdict.ok ? undefined : { reason: 'params_rejected', method: input.method, details: verdict.details };
}

/** The message a refusal answers with: says what is wrong and what to do. */
export function targetRefusalMessage(refusal: TargetRefusal): string {
  switch (refusal.reason) {
    case 'method_not_served':
      return `method "${refusal.method}" is not served by any running service (check the name and the namespace; allowUnserved / --allow-unserved adds it anyway)`;
    case 'params_rejected':
      return `params do not fit the params schema of "${refusal.method}"`;
  }
}
