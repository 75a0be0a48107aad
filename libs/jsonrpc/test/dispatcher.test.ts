import { Dispatcher, ErrorCode, InvalidParamsError, requestMessage, type JsonValue, type RequestMessage } from '@warren/jsonrpc';

const request = (method: string, params?: JsonValue[]): RequestMessage => requestMessage(method, params, 1);

describe('Dispatcher.respond', () => {
  const d = new Dispatcher<void>()
    .method('add', { params: { type: 'array', items: { type: 'number' } }, handler: (p) => (p as number[]).reduce((a, b) => a + b, 0) })
    .method('later', { handler: async () => 'done' })
    .method('throws', { handler: () => { throw new InvalidParamsError('bad'); } })
    .method('rejects', { handler: () => Promise.reject(new Error('nope')) })
    .method('nothing', { handler: () => undefined });

  it('answers a synchronous handler without a promise', () => {
    expect(d.respond(request('add', [1, 2]), undefined)).toEqual({ jsonrpc: '2.0', result: 3, id: 1 });
  });

  it('answers an async handler with a promise of the same response', async () => {
    const answer = d.respond(request('later'), undefined);
    expect(answer).toBeInstanceOf(Promise);
    await expect(answer).resolves.toEqual({ jsonrpc: '2.0', result: 'done', id: 1 });
  });

  it('turns throws, rejections, unknown methods and bad params into error responses, never exceptions', async () => {
    expect(d.respond(request('throws'), undefined)).toMatchObject({ error: { code: ErrorCode.InvalidParams, message: 'bad' }, id: 1 });
    await expect(d.respond(request('rejects'), undefined)).resolves.toMatchObject({ error: { code: ErrorCode.InternalError }, id: 1 });
    expect(d.respond(request('missing'), undefined)).toMatchObject({ error: { code: ErrorCode.MethodNotFound }, id: 1 });
    expect(d.respond({ jsonrpc: '2.0', method: 'add', params: ['x'], id: 1 } as never, undefined)).toMatchObject({ error: { code: ErrorCode.InvalidParams }, id: 1 });
  });

  it('answers null for a handler that returns nothing', () => {
    expect(d.respond(request('nothing'), undefined)).toEqual({ jsonrpc: '2.0', result: null, id: 1 });
  });

  it('behind middleware, a synchronous handler still reaches the middleware as a promise', async () => {
    const seen: string[] = [];
    const withMw = new Dispatcher<void>()
      .method('add', { handler: (p) => (p as number[])[0]! + (p as number[])[1]! })
      .use(async (next, call, ctx) => {
        const result = await next(call, ctx).then((r) => (seen.push(`after ${call.method}`), r));
        return (result as number) * 10;
      });
    await expect(withMw.respond(request('add', [1, 2]), undefined)).resolves.toEqual({ jsonrpc: '2.0', result: 30, id: 1 });
    expect(seen).toEqual(['after add']);
  });
});

describe('DispatcherOptions.onRequestError', () => {
  it('is told each failing request once, with its call and context, before the answer; never on success; a throwing listener changes nothing', async () => {
    const told: [unknown, string, string][] = [];
    const d = new Dispatcher<string>({ onRequestError: (err, call, ctx) => told.push([err, call.method, ctx]) })
      .method('ok', { handler: () => 1 })
      .method('sync', { handler: () => { throw new TypeError('sync'); } })
      .method('async', { handler: () => Promise.reject(new RangeError('async')) })
      .method('typed', { params: { type: 'array', items: { type: 'number' } }, handler: () => 1 });
    d.respond(request('ok'), 'c0');
    expect(d.respond(request('sync'), 'c1')).toMatchObject({ error: { code: ErrorCode.InternalError } });
    await expect(d.respond(request('async'), 'c2')).resolves.toMatchObject({ error: { code: ErrorCode.InternalError } });
    d.respond(request('typed', ['x' as unknown as number]), 'c3');
    expect(told.map(([err, method, ctx]) => [err instanceof InvalidParamsError ? 'InvalidParams' : (err as Error).name, method, ctx])).toEqual([['TypeError', 'sync', 'c1'], ['RangeError', 'async', 'c2'], ['InvalidParams', 'typed', 'c3']]);
    const loud = new Dispatcher<void>({ onRequestError: () => { throw new Error('listener'); } }).method('sync', { handler: () => { throw new Error('x'); } });
    expect(loud.respond(request('sync'), undefined)).toMatchObject({ error: { code: ErrorCode.InternalError } });
  });
});
