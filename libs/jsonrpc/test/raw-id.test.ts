import { RawNumberId, decode, encode, encodeResponse, errorResponse, idText, parseIdText, successResponse, type Decoded, type Id } from '@warren/jsonrpc';

const requestId = (d: Decoded): Id | undefined => (d.kind === 'single' && (d.item.kind === 'request' || d.item.kind === 'invalid') ? (d.item.kind === 'request' ? d.item.message.id : d.item.response.id) : undefined);

/** Decodes a request with this id text and answers it: the answer's text must carry the same bytes. */
function roundTrip(idText: string): string {
  const d = decode(`{"jsonrpc":"2.0","method":"a","id":${idText}}`);
  const id = requestId(d);
  if (id === undefined) throw new Error('not a request');
  return encodeResponse(successResponse(id, 1));
}

describe('exact ids', () => {
  it.each(['9007199254740993', '-9007199254740993', '1.0', '1e3', '-0', '0.10000000000000000000001', '123456789012345678901234567890', '1E+2'])(
    'echoes %s byte for byte', (text) => {
      const answer = roundTrip(text);
      expect(answer).toContain(`"id":${text}}`);
      expect(decode(answer)).toMatchObject({ kind: 'single', item: { kind: 'response' } });
    },
  );

  it('keeps canonical number ids as plain numbers (no cost on the common path)', () => {
    for (const text of ['1', '-7', '1.5', '0', '9007199254740991']) {
      const id = requestId(decode(`{"jsonrpc":"2.0","method":"a","id":${text}}`));
      expect(typeof id).toBe('number');
      expect(roundTrip(text)).toBe(`{"jsonrpc":"2.0","result":1,"id":${text}}`);
    }
  });

  it('reads the message id, not an id nested in params or named inside a string', () => {
    const d = decode('{"jsonrpc":"2.0","params":{"id":1.0,"x":"\\"id\\":2.0"},"method":"a","id" : 3.0}');
    expect(requestId(d)).toEqual(new RawNumberId('3.0'));
    if (d.kind !== 'single' || d.item.kind !== 'request') throw new Error('not a request');
    expect(d.item.message.params).toEqual({ id: 1, x: '"id":2.0' });
  });

  it('keeps each id of a batch, by position', () => {
    const d = decode('[{"jsonrpc":"2.0","method":"a","id":1.0}, 5, {"jsonrpc":"2.0","method":"b","params":[{"id":2.0}],"id":9007199254740993},{"jsonrpc":"2.0","method":"c","id":4}]');
    if (d.kind !== 'batch') throw new Error('not a batch');
    const ids = d.items.map((i) => (i.kind === 'request' ? i.message.id : i.kind === 'invalid' ? i.response.id : undefined));
    expect(ids).toEqual([new RawNumberId('1.0'), null, new RawNumberId('9007199254740993'), 4]);
    const answer = encodeResponse(d.items.map((i) => (i.kind === 'request' ? successResponse(i.message.id, null) : errorResponse(null, -32600))));
    expect(answer).toContain('"id":1.0}');
    expect(answer).toContain('"id":9007199254740993}');
    expect(JSON.parse(answer)).toHaveLength(4);
  });

  it('keeps a number id past a double (1e309, 1E400: Infinity to JSON.parse) as written (protocol v1.1)', () => {
    for (const text of ['1e309', '1E400', '-1e309']) {
      const decoded = decode(`{"jsonrpc":"2.0","method":"a","id":${text}}`);
      expect(decoded).toMatchObject({ item: { kind: 'request' } });
      const id = decoded.kind === 'single' && decoded.item.kind === 'request' ? decoded.item.message.id : undefined;
      expect(id).toEqual(new RawNumberId(text));
      expect(encodeResponse({ jsonrpc: '2.0', result: 1, id: id ?? null })).toBe(`{"jsonrpc":"2.0","result":1,"id":${text}}`);
    }
  });

  it('answers an invalid request with its exact id', () => {
    const d = decode('{"jsonrpc":"1.0","method":"a","id":9007199254740993}');
    expect(requestId(d)).toEqual(new RawNumberId('9007199254740993'));
  });

  it('encodes requests with a raw id exactly, and an id-only object', () => {
    expect(encode({ jsonrpc: '2.0', method: 'a', params: [1], id: new RawNumberId('1.0') })).toBe('{"jsonrpc":"2.0","method":"a","params":[1],"id":1.0}');
  });

  it('stores and reads ids as text exactly', () => {
    for (const id of [new RawNumberId('9007199254740993'), new RawNumberId('1.0'), 'x', 7, 1.5, null] as Id[]) expect(parseIdText(idText(id))).toEqual(id);
    expect(parseIdText('{')).toBeNull();
    expect(parseIdText(undefined)).toBeNull();
  });
});
