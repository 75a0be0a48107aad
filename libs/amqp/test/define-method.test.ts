// Schemas as code at run time: what defineMethod hands the dispatcher and the announcement is
// the plain JSON of the TypeBox schema, and ajv checks params against it before the handler runs.
import { Type } from '@sinclair/typebox';
import { Dispatcher, ErrorCode, type Params } from '@warren/jsonrpc';
import type { HandlerContext } from '../src/runtime/context';
import { defineMethod, defineNotification, jsonSchemaOf, NoParams } from '../src/runtime/define-method';

const pair = Type.Union([Type.Tuple([Type.Number(), Type.Number()]), Type.Object({ minuend: Type.Number(), subtrahend: Type.Number() }, { additionalProperties: false })]);

describe('defineMethod', () => {
  const seen: unknown[] = [];
  const subtract = defineMethod({ description: 'a − b', params: pair, result: Type.Number(), errors: [{ code: 1, message: 'odd' }] }, (p) => {
    seen.push(p);
    return Array.isArray(p) ? p[0] - p[1] : p.minuend - p.subtrahend;
  });
  const dispatcher = new Dispatcher<HandlerContext>().method('subtract', subtract);
  const call = (params: Params) => dispatcher.handleRequest({ jsonrpc: '2.0', method: 'subtract', params, id: 1 }, {} as HandlerContext);

  it('declares the schemas as plain JSON, without TypeBox symbols, and keeps the other fields', () => {
    expect(subtract.params).toEqual(JSON.parse(JSON.stringify(pair)));
    expect(Object.getOwnPropertySymbols(subtract.params)).toEqual([]);
    expect(subtract.params).toEqual(jsonSchemaOf(pair));
    expect(subtract.result).toEqual({ type: 'number' });
    expect(subtract).toMatchObject({ description: 'a − b', errors: [{ code: 1, message: 'odd' }] });
  });

  it('runs the handler with params by position or by name', async () => {
    await expect(call([42, 23])).resolves.toMatchObject({ result: 19 });
    await expect(call({ minuend: 42, subtrahend: 23 })).resolves.toMatchObject({ result: 19 });
  });

  it.each<Params>([[1], [1, 2, 3], ['1', 2], { minuend: 1 }, { minuend: 1, subtrahend: 2, extra: 3 }])('refuses %j with -32602 before the handler runs', async (params) => {
    seen.length = 0;
    await expect(call(params)).resolves.toMatchObject({ error: { code: ErrorCode.InvalidParams } });
    expect(seen).toEqual([]);
  });
});

describe('defineNotification and NoParams', () => {
  it('runs a notification handler only with params its schema lets through', async () => {
    const heard: number[][] = [];
    const sum = defineNotification({ params: Type.Array(Type.Number(), { maxItems: 3 }) }, (numbers) => {
      heard.push(numbers);
    });
    expect(sum.params).toEqual({ type: 'array', items: { type: 'number' }, maxItems: 3 });
    const dispatcher = new Dispatcher<HandlerContext>({ onNotificationError: () => undefined }).notification('sum', sum);
    for (const params of [[1, 2], ['x'], [1, 2, 3, 4]]) await dispatcher.handleNotification({ jsonrpc: '2.0', method: 'sum', params }, {} as HandlerContext);
    expect(heard).toEqual([[1, 2]]);
  });

  it('NoParams accepts absent, [] and {} only', async () => {
    const none = defineMethod({ params: NoParams, result: Type.Literal('ok') }, () => 'ok');
    const dispatcher = new Dispatcher<HandlerContext>().method('none', none);
    const code = async (params?: Params) => {
      const r = await dispatcher.handleRequest({ jsonrpc: '2.0', method: 'none', ...(params === undefined ? {} : { params }), id: 1 }, {} as HandlerContext);
      return 'error' in r ? r.error.code : r.result;
    };
    expect([await code(), await code([]), await code({})]).toEqual(['ok', 'ok', 'ok']);
    expect([await code([1]), await code({ a: 1 })]).toEqual([ErrorCode.InvalidParams, ErrorCode.InvalidParams]);
  });
});
