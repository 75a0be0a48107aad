// The calculator's methods: plain functions of (params, ctx), each declared with
// the TypeBox schemas of its params and result (schemas as code, @warren/amqp's
// defineMethod). The schema is the JSON Schema ajv checks and discovery
// announces, and it types the handler, so there is no cast and no second copy.
// Nothing here knows about RabbitMQ, so the tests call these directly, and
// main.ts hands them to startService unchanged.
import { Type } from '@sinclair/typebox';
import { defineMethod, type ServiceMethod } from '@warren/amqp';
import { InvalidParamsError } from '@warren/jsonrpc';
import { ExpressionError, evaluate, formatResult } from './expression';

/** Exactly two numbers, by position. */
const numberPair = Type.Tuple([Type.Number(), Type.Number()]);

/**
 * Params that must be absent or empty. Written as a `not` so absent params pass;
 * the handler ignores them, so their type (`unknown`) is never read.
 */
const noParams = Type.Not(Type.Union([Type.Array(Type.Unknown(), { minItems: 1 }), Type.Object({}, { minProperties: 1 })]));

export const calculateInput = Type.Object(
  {
    expression: Type.String({
      description: 'Arithmetic over numbers with + - * / %, parentheses and unary minus, e.g. "1+3+6" or "-(2.5*4)%3".',
      maxLength: 1000,
      examples: ['1+3+6'],
    }),
  },
  { additionalProperties: false },
);

export const add = defineMethod(
  {
    description: 'Adds two numbers: [a, b] → a + b.',
    params: Type.Union([numberPair, Type.Object({ a: Type.Number(), b: Type.Number() }, { additionalProperties: false })]),
    result: Type.Number(),
  },
  (p) => (Array.isArray(p) ? p[0] + p[1] : p.a + p.b),
);

export const subtract = defineMethod(
  {
    description: 'minuend − subtrahend, by position [minuend, subtrahend] or by name {minuend, subtrahend}.',
    params: Type.Union([numberPair, Type.Object({ minuend: Type.Number(), subtrahend: Type.Number() }, { additionalProperties: false })]),
    result: Type.Number(),
  },
  (p) => (Array.isArray(p) ? p[0] - p[1] : p.minuend - p.subtrahend),
);

export const sum = defineMethod(
  {
    description: 'Adds any count of numbers: [1, 2, 4] → 7; [] → 0.',
    params: Type.Array(Type.Number(), { maxItems: 10_000 }),
    result: Type.Number(),
  },
  (numbers) => numbers.reduce((a, b) => a + b, 0),
);

/**
 * The mean of the numbers, summed by a nested call to `sum` (through `ctx.client`, so it inherits
 * this call's deadline, cancellation and trace): the example of a method that calls another, and
 * the call a trace follows from the gateway through two workers (docs/observability.md).
 */
export const average = defineMethod(
  {
    description: 'The mean of one or more numbers: [1, 2, 6] → 3 (sums them by calling `sum`).',
    params: Type.Array(Type.Number(), { minItems: 1, maxItems: 10_000 }),
    result: Type.Number(),
  },
  async (numbers, ctx) => {
    const total = await ctx.client.call<number>('sum', numbers);
    ctx.log.debug({ count: numbers.length }, 'average: summed by a nested call');
    return total / numbers.length;
  },
);

export const getData = defineMethod(
  {
    description: 'Returns the fixed sample ["hello", 5] (the JSON-RPC specification\'s example).',
    params: noParams,
    result: Type.Tuple([Type.String(), Type.Number()]),
  },
  () => ['hello', 5],
);

/**
 * The `calculate` tool. Its result is the number formatted as text ("10"),
 * which the gateway's tools/call shows as the text content and as
 * `structuredContent: { result: "10" }`. A bad expression is answered as
 * -32602 Invalid params whose message is the parser's own (say "Unexpected
 * end of expression at position 3 (expected a number or '(')"), so the
 * gateway can show `Error executing tool calculate: <message>`; the offset is
 * in `data.position`. The tool's input schema is the params schema (the
 * default of `tool.inputSchema`).
 */
export const calculate = defineMethod(
  {
    description: 'Evaluates an arithmetic expression and returns the result as text.',
    params: calculateInput,
    result: Type.String(),
    tool: {
      description: 'Evaluate an arithmetic expression (numbers, + - * / %, parentheses, unary minus) and return the result, e.g. "1+3+6" gives "10".',
    },
  },
  ({ expression }) => {
    try {
      return formatResult(evaluate(expression));
    } catch (err) {
      if (err instanceof ExpressionError) throw new InvalidParamsError(err.message, err.position === undefined ? { expression } : { expression, position: err.position });
      throw err;
    }
  },
);

/** Everything the calculator serves, by method name. */
export const calculatorMethods: Readonly<Record<string, ServiceMethod>> = {
  add,
  subtract,
  sum,
  get_data: getData,
  calculate,
  average,
};
