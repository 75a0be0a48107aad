// Compile-time contract of defineMethod, checked by `npm run typecheck` (this file is in the
// root program) and by define-method-types.test.ts, which also proves that every line marked
// `@ts-expect-error` fails to compile on its own. Never run, only compiled.
import { Type } from '@sinclair/typebox';
import { defineMethod } from '../../src/runtime/define-method';

const pair = Type.Union([Type.Tuple([Type.Number(), Type.Number()]), Type.Object({ minuend: Type.Number(), subtrahend: Type.Number() })]);

// The right uses compile: by position and by name, a sync or async result of the declared type.
export const subtract = defineMethod({ params: pair, result: Type.Number() }, (p) => (Array.isArray(p) ? p[0] - p[1] : p.minuend - p.subtrahend));
export const asyncSum = defineMethod({ params: Type.Array(Type.Number()), result: Type.Number() }, async (ns) => ns.reduce((a, b) => a + b, 0));
export const optional = defineMethod(
  { params: Type.Object({ size: Type.Integer(), title: Type.Optional(Type.String()) }), result: Type.String() },
  ({ size, title }) => `${title ?? 'report'}:${size.toFixed(0)}`,
);
export const literal = defineMethod({ params: Type.Tuple([]), result: Type.Tuple([Type.String(), Type.Number()]) }, () => ['hello', 5]);

// Wrong params uses fail.
export const unknownField = defineMethod({ params: pair, result: Type.Number() }, (p) =>
  // @ts-expect-error `a` is no field of either params shape
  Array.isArray(p) ? p[0] : p.a,
);
export const unnarrowed = defineMethod({ params: pair, result: Type.Number() }, (p) =>
  // @ts-expect-error by-name params have no index 0 until narrowed with Array.isArray
  p[0],
);
export const wrongItem = defineMethod({ params: Type.Object({ name: Type.String() }), result: Type.Number() }, ({ name }) =>
  // @ts-expect-error `name` is a string, it has no toFixed
  name.toFixed(0),
);
export const optionalUnchecked = defineMethod({ params: Type.Object({ title: Type.Optional(Type.String()) }), result: Type.Number() }, ({ title }) =>
  // @ts-expect-error an optional field may be undefined
  title.length,
);
export const pastTuple = defineMethod({ params: Type.Tuple([Type.Number(), Type.Number()]), result: Type.Number() }, (p) =>
  // @ts-expect-error a pair has no third position
  p[2],
);

// Wrong results fail, sync and async.
// @ts-expect-error a string is not the declared number
export const wrongResult = defineMethod({ params: pair, result: Type.Number() }, () => 'nine');
// @ts-expect-error a promised string is not the declared number either
export const wrongAsyncResult = defineMethod({ params: pair, result: Type.Number() }, async () => 'nine');
export const missingField = defineMethod(
  { params: Type.Tuple([]), result: Type.Object({ report: Type.String(), pages: Type.Integer() }) },
  // @ts-expect-error the result lacks `pages`
  () => ({ report: 'r' }),
);
// @ts-expect-error a (string | number)[] is not the declared [string, number]
export const widened = defineMethod({ params: Type.Tuple([]), result: Type.Tuple([Type.String(), Type.Number()]) }, (): (string | number)[] => ['hello', 5]);
