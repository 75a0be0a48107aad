import { type HandlerContext } from '@warren/amqp';
import { jsonSchemaOf } from '../../../libs/amqp/src/runtime/define-method';
import { Dispatcher, ErrorCode, type Params, type ResponseMessage } from '@warren/jsonrpc';
import { calculateInput, calculatorMethods } from '../src/methods';

// The runtime validates params with the method's JSON Schema before the
// handler runs; a Dispatcher does exactly that, without any transport.
const dispatcher = new Dispatcher<HandlerContext>();
for (const [name, method] of Object.entries(calculatorMethods)) dispatcher.method(name, method);
const ctx = {} as HandlerContext;

function call(method: string, params?: Params): Promise<ResponseMessage> {
  return dispatcher.handleRequest({ jsonrpc: '2.0', method, ...(params === undefined ? {} : { params }), id: 1 }, ctx);
}

const result = async (method: string, params?: Params): Promise<unknown> => {
  const r = await call(method, params);
  if ('error' in r) throw new Error(`${method} failed: ${JSON.stringify(r.error)}`);
  return r.result;
};
const errorCode = async (method: string, params?: Params): Promise<number | undefined> => {
  const r = await call(method, params);
  return 'error' in r ? r.error.code : undefined;
};

describe('calculator methods', () => {
  it('adds two numbers by position or by name', async () => {
    await expect(result('add', [4, 5])).resolves.toBe(9);
    await expect(result('add', [10, 20])).resolves.toBe(30);
    await expect(result('add', { a: 1.5, b: 2 })).resolves.toBe(3.5);
  });

  it('subtracts by position and by name, in either key order', async () => {
    await expect(result('subtract', [42, 23])).resolves.toBe(19);
    await expect(result('subtract', [23, 42])).resolves.toBe(-19);
    await expect(result('subtract', { subtrahend: 23, minuend: 42 })).resolves.toBe(19);
    await expect(result('subtract', { minuend: 42, subtrahend: 23 })).resolves.toBe(19);
  });

  it('sums any count of numbers', async () => {
    await expect(result('sum', [1, 2, 4])).resolves.toBe(7);
    await expect(result('sum', [])).resolves.toBe(0);
  });

  it('answers get_data with ["hello", 5], with or without empty params', async () => {
    await expect(result('get_data')).resolves.toEqual(['hello', 5]);
    await expect(result('get_data', [])).resolves.toEqual(['hello', 5]);
    await expect(result('get_data', {})).resolves.toEqual(['hello', 5]);
  });

  it.each<[string, Params | undefined]>([
    ['add', undefined],
    ['add', [1]],
    ['add', [1, 2, 3]],
    ['add', ['1', 2]],
    ['add', { a: 1 }],
    ['subtract', { minuend: 1 }],
    ['subtract', { minuend: 1, subtrahend: 2, extra: 3 }],
    ['sum', ['x']],
    ['sum', { a: 1 }],
    ['get_data', [1]],
    ['calculate', {}],
    ['calculate', { expression: 5 }],
    ['calculate', ['1+1']],
    ['calculate', { expression: '1', other: true }],
  ])('refuses %s %j with -32602 before the handler runs', async (method, params) => {
    await expect(errorCode(method, params)).resolves.toBe(ErrorCode.InvalidParams);
  });
});

describe('the calculate tool', () => {
  it('evaluates to text', async () => {
    await expect(result('calculate', { expression: '1+3+6' })).resolves.toBe('10');
    await expect(result('calculate', { expression: '-(2.5*4)%3' })).resolves.toBe('-1');
    await expect(result('calculate', { expression: '0*-1' })).resolves.toBe('0');
  });

  it.each(['1/(', '', '2+*3', '1/0', 'eval(1)', '1e', ')'])('answers %j with -32602 carrying the parser message and position', async (expression) => {
    const r = await call('calculate', { expression });
    expect(r).toMatchObject({ error: { code: ErrorCode.InvalidParams, data: { expression } } });
    const message = 'error' in r ? r.error.message : '';
    // A message a person can act on, never the generic "Invalid params".
    expect(message).not.toBe('Invalid params');
    expect(message.length).toBeGreaterThan(10);
  });

  it('declares itself as an MCP tool with an object input schema', () => {
    const tool = calculatorMethods['calculate']?.tool;
    expect(tool?.description).toEqual(expect.any(String));
    // No copy of the schema: the gateway lists the params schema as the tool's input schema.
    expect(tool?.inputSchema).toBeUndefined();
    expect(calculatorMethods['calculate']?.params).toEqual(jsonSchemaOf(calculateInput));
    expect(calculatorMethods['calculate']?.params).toMatchObject({ type: 'object', required: ['expression'], additionalProperties: false });
  });

  it('gives every method a params schema and a description', () => {
    for (const [name, m] of Object.entries(calculatorMethods)) {
      expect({ name, params: m.params !== undefined, description: typeof m.description }).toEqual({ name, params: true, description: 'string' });
    }
  });
});
