// The JSON Schema reading `warren gen` does, printed both ways: each construct the announcements
// use (and the ones a hand-written schema may) as the TypeScript and the Python type it becomes.
import type { JsonSchema } from '@warren/jsonrpc';
import { apiModel } from '../src/gen/api-model';
import { Identifiers, camel, pascal, snake } from '../src/gen/identifiers';
import { pythonClient } from '../src/gen/python';
import { typeOf } from '../src/gen/schema-types';
import { tsType } from '../src/gen/typescript';

const ts = (schema: JsonSchema, domain?: readonly ('array' | 'object')[]): string => tsType(typeOf(schema, domain)).replace(/\s+/g, ' ');

describe('JSON Schema to TypeScript', () => {
  it.each<[string, JsonSchema, string]>([
    ['any', {}, 'unknown'],
    ['true / false', true, 'unknown'],
    ['nothing', false, 'never'],
    ['primitives', { type: ['string', 'integer', 'boolean', 'null'] }, 'string | number | boolean | null'],
    ['const and enum', { enum: ['a', 1, true, null] }, '"a" | 1 | true | null'],
    ['const', { const: 'x' }, '"x"'],
    ['a list', { type: 'array', items: { type: 'string' } }, 'string[]'],
    ['a list of a union', { type: 'array', items: { anyOf: [{ type: 'string' }, { type: 'number' }] } }, '(string | number)[]'],
    ['a draft-07 tuple', { type: 'array', items: [{ type: 'string' }, { type: 'number' }], additionalItems: false, minItems: 1 }, '[string, number?]'],
    ['a 2020-12 tuple with a rest', { type: 'array', prefixItems: [{ type: 'string' }], items: { type: 'number' }, minItems: 1 }, '[string, ...number[]]'],
    ['a short bounded list', { type: 'array', items: { type: 'number' }, minItems: 2, maxItems: 2 }, '[number, number]'],
    ['a closed object', { type: 'object', properties: { b: { type: 'number' }, a: { type: 'string', description: 'the a' } }, required: ['b'], additionalProperties: false }, '{ /** the a */ a?: string; b: number; }'],
    ['an open object', { type: 'object', properties: { a: { type: 'string' } }, required: ['a'] }, '{ a: string; [key: string]: unknown; }'],
    ['a map', { type: 'object', additionalProperties: { type: 'number' } }, 'Record<string, number>'],
    ['an empty object', { type: 'object', maxProperties: 0 }, 'Record<string, never>'],
    ['odd property names', { type: 'object', properties: { 'x-y': { type: 'number' } }, additionalProperties: false }, '{ "x-y"?: number; }'],
    ['nullable by oneOf', { oneOf: [{ type: 'string' }, { type: 'null' }] }, 'string | null'],
    ['allOf', { allOf: [{ type: 'object', properties: { a: { type: 'number' } }, additionalProperties: false }, { type: 'object', properties: { b: { type: 'string' } }, additionalProperties: false }] }, '{ a?: number; } & { b?: string; }'],
    ['a local $ref', { $defs: { n: { type: 'number' } }, type: 'array', items: { $ref: '#/$defs/n' } }, 'number[]'],
    ['a remote $ref', { $ref: 'https://example.com/s.json' }, 'unknown'],
    ['a recursive $ref ends', { type: 'array', items: { $ref: '#' } }, expect.stringContaining('unknown') as unknown as string],
    ['not (no static type)', { not: { type: 'string' } }, 'unknown'],
  ])('%s', (_what, schema, expected) => {
    expect(ts(schema)).toEqual(expected);
  });

  it('reads untyped params as arrays or objects (JSON-RPC params are nothing else)', () => {
    expect(ts({}, ['array', 'object'])).toBe('unknown[] | Record<string, unknown>');
    expect(ts({ maxItems: 0, maxProperties: 0 }, ['array', 'object'])).toBe('[] | Record<string, never>');
    expect(ts({ type: 'string' }, ['array', 'object'])).toBe('never');
  });
});

describe('the API model', () => {
  const model = apiModel({
    openrpc: '1.3.2',
    methods: [
      { name: 'z.last', paramStructure: 'by-position', params: [{ name: 'n', schema: { type: 'integer' }, required: true }, { name: 'm', schema: { type: 'string' } }], result: { name: 'r', schema: { type: 'boolean' } } },
      { name: 'a.first', paramStructure: 'by-name', params: [{ name: 'q', schema: { type: 'string' }, required: true }], result: { name: 'r', schema: {} }, errors: [{ code: 4001, message: 'Out of stock' }] },
      { name: 'none', params: [], result: { name: 'r', schema: { type: 'null' } } },
    ],
    'x-warren-notifications': [
      { name: 'tick', service: 'b', 'x-warren-params-schema': { type: 'array', items: { type: 'number' } } },
      { name: 'tick', service: 'a', 'x-warren-params-schema': { type: 'array', maxItems: 3 } },
    ],
  });

  it('sorts, rebuilds params from content descriptors, and keeps declared errors', () => {
    expect(model.methods.map((m) => m.name)).toEqual(['a.first', 'none', 'z.last']);
    expect(tsType(model.methods[2]?.params ?? { kind: 'never' })).toBe('[number, string?]');
    expect(tsType(model.methods[0]?.params ?? { kind: 'never' }).replace(/\s+/g, ' ')).toBe('{ q: string; [key: string]: unknown; }');
    expect(model.methods[0]?.errors).toEqual([{ code: 4001, message: 'Out of stock' }]);
    expect(model.methods.map((m) => m.paramsOptional)).toEqual([false, true, false]);
  });

  it('merges a notification several services subscribe to: its params must suit them all', () => {
    expect(model.notifications).toHaveLength(1);
    expect(model.notifications[0]?.services).toEqual(['a', 'b']);
    expect(tsType(model.notifications[0]?.params ?? { kind: 'never' })).toBe('[unknown?, unknown?, unknown?] & number[]');
  });

  it('prints Python: TypedDicts hoisted, NotRequired for optional keys, one Tuple per allowed length, declared errors as a Literal', () => {
    const py = pythonClient(model, 'warren gen');
    expect(py).toContain('ZLastParams = Union[Tuple[int], Tuple[int, str]]');
    expect(py).toContain('AFirstParams = TypedDict("AFirstParams", {\n    "q": str,\n})');
    expect(py).toContain('AFirstErrorCode = Literal[4001]');
    expect(py).toContain('    def a_first(self, params: AFirstParams, timeout: Optional[float] = None) -> AFirstResult:');
    expect(py).toContain('    def none_(self, params: Optional[NoneParams] = None, timeout: Optional[float] = None) -> NoneResult:');
  });
});

describe('identifiers', () => {
  it('splits method names into words', () => {
    expect(['report.render', 'notifyEvent', 'get_data', 'tools/call', '$/cancelRequest'].map((n) => [camel(n), pascal(n), snake(n)])).toEqual([
      ['reportRender', 'ReportRender', 'report_render'],
      ['notifyEvent', 'NotifyEvent', 'notify_event'],
      ['getData', 'GetData', 'get_data'],
      ['toolsCall', 'ToolsCall', 'tools_call'],
      ['cancelRequest', 'CancelRequest', 'cancel_request'],
    ]);
  });

  it('keeps off reserved words and makes every name unique, case-insensitively', () => {
    const ids = new Identifiers(['delete', 'proxy']);
    expect(['delete', 'proxy', 'getData', 'GetData', '', '2fa'].map((n) => ids.take(n, 'call'))).toEqual(['delete_', 'proxy_', 'getData', 'GetData_', 'call', 'call2fa']);
  });
});
