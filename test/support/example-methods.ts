import { InvalidParamsError, type JsonSchema, type MethodDefinition, type NotificationDefinition } from '@warren/jsonrpc';

/**
 * The methods the specification's and the design notes' examples assume,
 * written once so the dispatcher tests, the AMQP tests and the gateway tests
 * serve the very same thing.
 */
const twoNumbers: JsonSchema = {
  oneOf: [
    { type: 'array', items: { type: 'number' }, minItems: 2, maxItems: 2 },
    { type: 'object', properties: { minuend: { type: 'number' }, subtrahend: { type: 'number' } }, required: ['minuend', 'subtrahend'] },
  ],
};
const numbers: JsonSchema = { type: 'array', items: { type: 'number' } };

type Pair = [number, number] | { minuend: number; subtrahend: number };
type Definition = MethodDefinition<unknown, unknown, unknown>;

export const exampleMethods: Record<string, Definition> = {
  subtract: {
    params: twoNumbers,
    handler: (params) => {
      const p = params as Pair;
      return Array.isArray(p) ? p[0] - p[1] : p.minuend - p.subtrahend;
    },
  },
  add: { params: { type: 'array', items: { type: 'number' }, minItems: 2, maxItems: 2 }, handler: (params) => (params as number[]).reduce((a, b) => a + b, 0) },
  sum: { params: numbers, handler: (params) => (params as number[]).reduce((a, b) => a + b, 0) },
  get_data: { handler: () => ['hello', 5] },
  fail: {
    handler: () => {
      throw new InvalidParamsError('always fails');
    },
  },
};

/** Notification names from the example files; each records what it received. */
export const exampleNotificationNames = ['update', 'notify_hello', 'notify_sum', 'logMessage', 'notifyEvent'] as const;

export function exampleNotifications(record: (method: string, params: unknown) => void): Record<string, NotificationDefinition<unknown, unknown>> {
  return Object.fromEntries(exampleNotificationNames.map((name) => [name, { handler: (params: unknown) => record(name, params) }]));
}
