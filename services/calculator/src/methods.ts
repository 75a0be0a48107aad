// The calculator's methods: plain functions of (params, ctx), with the JSON
// Schema that guards each one. Nothing here knows about RabbitMQ, so the tests
// call these directly, and main.ts hands them to startService unchanged.
import type { ServiceMethod } from '@warren/amqp';
import { InvalidParamsError, type JsonSchema } from '@warren/jsonrpc';
import { ExpressionError, evaluate, formatResult } from './expression';

/** Exactly two numbers, by position. */
const numberPair: JsonSchema = { type: 'array', items: { type: 'number' }, minItems: 2, maxItems: 2 };

/** Params that must be absent or empty. Written as a `not` so absent params pass and ajv's strict mode has no type to guess. */
const noParams: JsonSchema = { not: { anyOf: [{ type: 'array', minItems: 1 }, { type: 'object', minProperties: 1 }] } };

export const calculateInput: JsonSchema = {
  type: 'object',
  properties: {
    expression: {
      type: 'string',
      description: 'Arithmetic over numbers with + - * / %, parentheses and unary minus, e.g. "1+3+6" or "-(2.5*4)%3".',
      maxLength: 1000,
      examples: ['1+3+6'],
    },
  },
  required: ['expression'],
  additionalProperties: false,
};

type Pair = [number, number] | { minuend: number; subtrahend: number };

export const add: ServiceMethod = {
  description: 'Adds two numbers: [a, b] → a + b.',
  params: { oneOf: [numberPair, { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'], additionalProperties: false }] },
  result: { type: 'number' },
  handler: (params) => {
    const p = params as [number, number] | { a: number; b: number };
    return Array.isArray(p) ? p[0] + p[1] : p.a + p.b;
  },
};

export const subtract: ServiceMethod = {
  description: 'minuend − subtrahend, by position [minuend, subtrahend] or by name {minuend, subtrahend}.',
  params: {
    oneOf: [
      numberPair,
      { type: 'object', properties: { minuend: { type: 'number' }, subtrahend: { type: 'number' } }, required: ['minuend', 'subtrahend'], additionalProperties: false },
    ],
  },
  result: { type: 'number' },
  handler: (params) => {
    const p = params as Pair;
    return Array.isArray(p) ? p[0] - p[1] : p.minuend - p.subtrahend;
  },
};

export const sum: ServiceMethod = {
  description: 'Adds any count of numbers: [1, 2, 4] → 7; [] → 0.',
  params: { type: 'array', items: { type: 'number' }, maxItems: 10_000 },
  result: { type: 'number' },
  handler: (params) => (params as number[]).reduce((a, b) => a + b, 0),
};

export const getData: ServiceMethod = {
  description: 'Returns the fixed sample ["hello", 5] (the JSON-RPC specification\'s example).',
  params: noParams,
  result: { type: 'array', items: [{ type: 'string' }, { type: 'number' }], minItems: 2, maxItems: 2 },
  handler: () => ['hello', 5],
};

/**
 * The `calculate` tool. Its result is the number formatted as text ("10"),
 * which the gateway's tools/call shows as the text content and as
 * `structuredContent: { result: "10" }`. A bad expression is answered as
 * -32602 Invalid params whose message is the parser's own (say "Unexpected
 * end of expression at position 3 (expected a number or '(')"), so the
 * gateway can show `Error executing tool calculate: <message>`; the offset is
 * in `data.position`.
 */
export const calculate: ServiceMethod = {
  description: 'Evaluates an arithmetic expression and returns the result as text.',
  params: calculateInput,
  result: { type: 'string' },
  tool: {
    description: 'Evaluate an arithmetic expression (numbers, + - * / %, parentheses, unary minus) and return the result, e.g. "1+3+6" gives "10".',
    inputSchema: calculateInput,
  },
  handler: (params) => {
    const { expression } = params as { expression: string };
    try {
      return formatResult(evaluate(expression));
    } catch (err) {
      if (err instanceof ExpressionError) throw new InvalidParamsError(err.message, err.position === undefined ? { expression } : { expression, position: err.position });
      throw err;
    }
  },
};

/** Everything the calculator serves, by method name. */
export const calculatorMethods: Readonly<Record<string, ServiceMethod>> = {
  add,
  subtract,
  sum,
  get_data: getData,
  calculate,
};
