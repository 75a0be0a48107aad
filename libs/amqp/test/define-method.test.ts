// Schemas as code at run time: what defineMethod hands the dispatcher and the announcement is
// the plain JSON of the TypeBox schema, and ajv checks params against it before the handler runs.
import { Type } from '@sinclair/typebox';
import { Dispatcher, ErrorCode, type Params } from '@warren/jsonrpc';
import type { HandlerContext } from '../src/runtime/context';
import { defineMethod, jsonSchemaOf } from '../src/runtime/define-method';

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
