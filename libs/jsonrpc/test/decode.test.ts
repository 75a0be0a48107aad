import { ErrorCode, decode, encode, classifyItem, type Decoded } from '@warren/jsonrpc';

const code = (d: Decoded): number | undefined => (d.kind === 'rejected' ? d.response.error.code : undefined);

describe('decode', () => {
  it('tells requests, notifications and responses apart', () => {
    expect(decode('{"jsonrpc":"2.0","method":"a","id":1}')).toMatchObject({ kind: 'single', item: { kind: 'request' } });
    expect(decode('{"jsonrpc":"2.0","method":"a"}')).toMatchObject({ kind: 'single', item: { kind: 'notification' } });
    expect(decode('{"jsonrpc":"2.0","result":null,"id":1}')).toMatchObject({ kind: 'single', item: { kind: 'response' } });
    expect(decode('{"jsonrpc":"2.0","error":{"code":-1,"message":"x"},"id":null}')).toMatchObject({ kind: 'single', item: { kind: 'response' } });
  });

  it('treats id null as a request, not a notification', () => {
    expect(decode('{"jsonrpc":"2.0","method":"a","id":null}')).toMatchObject({ item: { kind: 'request', message: { id: null } } });
  });

  it('keeps ids exactly as sent', () => {
    const d = decode('{"jsonrpc":"2.0","method":"a","id":1.5}');
    expect(d).toMatchObject({ item: { message: { id: 1.5 } } });
    expect(decode('{"jsonrpc":"2.0","method":"a","id":"1"}')).toMatchObject({ item: { message: { id: '1' } } });
  });

  it.each([
    ['wrong version', '{"jsonrpc":"1.0","method":"a","id":1}', 1],
    ['missing version', '{"method":"a","id":1}', 1],
    ['method not a string', '{"jsonrpc":"2.0","method":1,"id":1}', 1],
    ['params a string', '{"jsonrpc":"2.0","method":"a","params":"x","id":1}', 1],
    ['params null', '{"jsonrpc":"2.0","method":"a","params":null,"id":1}', 1],
    ['params a number', '{"jsonrpc":"2.0","method":"a","params":3}', null],
    ['id an object', '{"jsonrpc":"2.0","method":"a","id":{}}', null],
    ['id a boolean', '{"jsonrpc":"2.0","method":"a","id":true}', null],
    ['a bare number', '5', null],
    ['null', 'null', null],
    ['result and error both', '{"jsonrpc":"2.0","result":1,"error":{"code":1,"message":"m"},"id":1}', 1],
  ])('answers Invalid Request for %s (id %p)', (_name, text, id) => {
    expect(decode(text)).toMatchObject({ kind: 'single', item: { kind: 'invalid', response: { error: { code: ErrorCode.InvalidRequest, message: 'Invalid Request' }, id } } });
  });

  it('answers one Invalid Request for an empty batch and one per bad item otherwise', () => {
    expect(code(decode('[]'))).toBe(ErrorCode.InvalidRequest);
    const d = decode('[1,[2],{"jsonrpc":"2.0","method":"a"}]');
    expect(d.kind).toBe('batch');
    if (d.kind === 'batch') expect(d.items.map((i) => i.kind)).toEqual(['invalid', 'invalid', 'notification']);
  });

  it('refuses oversized, too deep, invalid JSON and invalid UTF-8 with Parse error', () => {
    expect(decode('{"jsonrpc":', {})).toMatchObject({ kind: 'rejected', response: { id: null, error: { code: ErrorCode.ParseError } } });
    expect(decode('x'.repeat(100), { maxBytes: 50 })).toMatchObject({ kind: 'rejected', response: { error: { code: ErrorCode.ParseError, data: { reason: 'too_large' } } } });
    expect(decode('['.repeat(100_000) + ']'.repeat(100_000))).toMatchObject({ kind: 'rejected', response: { error: { data: { reason: 'too_deep' } } } });
    expect(decode(Uint8Array.from([0x7b, 0xff, 0xfe, 0x7d]))).toMatchObject({ kind: 'rejected', response: { error: { code: ErrorCode.ParseError, data: { reason: 'invalid_utf8' } } } });
  });

  it('does not count brackets inside strings towards depth', () => {
    const text = JSON.stringify({ jsonrpc: '2.0', method: 'a', params: ['['.repeat(1000)], id: 1 });
    expect(decode(text)).toMatchObject({ kind: 'single', item: { kind: 'request' } });
  });

  it('refuses a batch over the item limit', () => {
    const batch = JSON.stringify(Array.from({ length: 11 }, (_, i) => ({ jsonrpc: '2.0', method: 'a', id: i })));
    expect(code(decode(batch, { maxBatch: 10 }))).toBe(ErrorCode.InvalidRequest);
  });

  it('removes prototype-poisoning keys instead of applying them', () => {
    const d = decode('{"jsonrpc":"2.0","method":"a","params":{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}},"ok":1},"id":1}');
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
    expect(d).toMatchObject({ item: { kind: 'request', message: { params: { ok: 1 } } } });
    if (d.kind === 'single' && d.item.kind === 'request') expect(Object.getPrototypeOf(d.item.message.params)).toBe(Object.prototype);
  });

  it('rejects a bad limit by naming the field', () => {
    expect(() => decode('1', { maxDepth: 0 })).toThrow(/maxDepth/);
  });

  it('round-trips what encode produces', () => {
    const message = { jsonrpc: '2.0' as const, method: 'math.add', params: { a: [1, 'x', null] }, id: 'abc' };
    expect(classifyItem(JSON.parse(encode(message)))).toEqual({ kind: 'request', message });
  });
});
