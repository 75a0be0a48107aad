// Schemas as code: one TypeBox schema gives both the JSON Schema that ajv checks, announcements
// carry and rpc.discover publishes, and the handler's parameter and return types. TypeBox rather
// than zod because a TypeBox schema IS a JSON Schema object: nothing is converted or lost on the
// way to ajv, OpenRPC or a client in another language, which read the very same object.
import { Type, type Static, type TSchema, type TUnsafe } from '@sinclair/typebox';
import type { JsonSchema } from '@warren/jsonrpc';
import type { HandlerContext } from './context';
import type { ServiceMethod, ServiceNotification } from './service-options';

/**
 * Params that may be absent, `[]` or `{}` and nothing else (JSON-RPC params are only ever an
 * array or an object; `maxItems`/`maxProperties` ignore other types, so absent params pass).
 * Alone or in a `Type.Union` with the method's other params shapes.
 */
export const NoParams: TUnsafe<undefined | [] | Record<string, never>> = Type.Unsafe<undefined | [] | Record<string, never>>({ maxItems: 0, maxProperties: 0 });

/** Everything a `ServiceMethod` declares, with TypeBox schemas for `params` and `result`. */
export interface MethodSpec<P extends TSchema, R extends TSchema> extends Omit<ServiceMethod, 'params' | 'result' | 'handler'> {
  /** Checked by ajv before the handler runs (-32602 when it fails); types the handler's `params`. */
  readonly params: P;
  /** Announced for discovery (not checked at run time); types what the handler returns. */
  readonly result: R;
}

/** A handler typed from its schemas: `params` as ajv let it through, the result as announced. */
export type TypedHandler<P extends TSchema, R extends TSchema> = (params: Static<P>, ctx: HandlerContext) => Static<R> | Promise<Static<R>>;

/**
 * A service method whose handler's types come from its TypeBox schemas: no cast, no second copy.
 * By-position and by-name params are a `Type.Union` of a `Type.Tuple` and a `Type.Object`, and
 * the handler narrows with `Array.isArray`.
 *
 * @example
 * const subtract = defineMethod({
 *   params: Type.Union([Type.Tuple([Type.Number(), Type.Number()]), Type.Object({ minuend: Type.Number(), subtrahend: Type.Number() })]),
 *   result: Type.Number(),
 * }, (p) => (Array.isArray(p) ? p[0] - p[1] : p.minuend - p.subtrahend));
 */
// NoInfer: the types come from the schemas alone, so a literal the handler returns (['hello', 5])
// is checked against the result type instead of widening it.
export function defineMethod<P extends TSchema, R extends TSchema>(spec: MethodSpec<P, R>, handler: NoInfer<TypedHandler<P, R>>): ServiceMethod {
  const { params, result, ...rest } = spec;
  return {
    ...rest,
    params: jsonSchemaOf(params),
    result: jsonSchemaOf(result),
    // The only cast, and a proven one: the dispatcher runs ajv on this very schema before any
    // handler call and answers -32602 instead when the params do not fit it.
    handler: (p, ctx) => handler(p as Static<P>, ctx),
  };
}

/**
 * The plain JSON of a TypeBox schema: TypeBox marks its objects with symbol keys, which JSON
 * drops, so what ajv compiles is exactly what announcements and rpc.discover send.
 */
export function jsonSchemaOf(schema: TSchema): JsonSchema {
  return JSON.parse(JSON.stringify(schema)) as JsonSchema;
}

/** A notification declared like `defineMethod`: its TypeBox `params` schema types its handler. */
export function defineNotification<P extends TSchema>(
  spec: Omit<ServiceNotification, 'params' | 'handler'> & { readonly params: P },
  handler: NoInfer<(params: Static<P>, ctx: HandlerContext) => void | Promise<void>>,
): ServiceNotification {
  const { params, ...rest } = spec;
  // As in defineMethod: the dispatcher checks params against this schema before the handler runs.
  return { ...rest, params: jsonSchemaOf(params), handler: (p, ctx) => handler(p as Static<P>, ctx) };
}
