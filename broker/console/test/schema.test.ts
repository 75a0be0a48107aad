import { formFor, paramsFrom, paramsProblems } from '../src/schema';

const pairOrNamed = { oneOf: [{ type: 'array', items: { type: 'number' }, minItems: 2, maxItems: 2 }, { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] }] };

test('a oneOf of by-position and by-name params gets the by-name form', () => {
  const model = formFor(pairOrNamed);
  expect(model).toMatchObject({ shape: 'by-name', fields: [{ name: 'a', kind: 'number', required: true }, { name: 'b', kind: 'number', required: true }] });
  expect(paramsFrom(model, { a: '4', b: '5.5' })).toEqual({ ok: true, params: { a: 4, b: 5.5 } });
  expect(paramsFrom(model, { a: '4' })).toEqual({ ok: false, field: 'b', message: 'b is required' });
});

test('report.render: an integer with bounds, an optional string left out when empty', () => {
  const model = formFor({ type: 'object', properties: { size: { type: 'integer', minimum: 1, maximum: 600, description: 'steps' }, title: { type: 'string' } }, required: ['size'], additionalProperties: false });
  expect(model).toMatchObject({ shape: 'by-name', fields: [{ name: 'size', kind: 'integer', minimum: 1, maximum: 600, description: 'steps' }, { name: 'title', kind: 'string', required: false }] });
  expect(paramsFrom(model, { size: '10', title: '' })).toEqual({ ok: true, params: { size: 10 } });
  expect(paramsFrom(model, { size: '1.5' })).toMatchObject({ ok: false, field: 'size' });
  expect(paramsFrom(model, { size: 'x' })).toMatchObject({ ok: false, field: 'size' });
});

test('tuples are positional; variadic arrays and free schemas get the JSON editor', () => {
  const tuple = formFor({ type: 'array', items: [{ type: 'string', title: 'name' }, { type: 'boolean' }] });
  expect(tuple).toMatchObject({ shape: 'by-position', fields: [{ name: 'name', kind: 'string' }, { name: '#2', kind: 'boolean' }] });
  expect(paramsFrom(tuple, { name: 'x', '#2': 'true' })).toEqual({ ok: true, params: ['x', true] });
  expect(formFor({ type: 'array', items: { type: 'number' } })).toEqual({ shape: 'json', example: '[]' });
  expect(formFor(undefined)).toEqual({ shape: 'json', example: '' });
  expect(paramsFrom({ shape: 'json', example: '' }, {}, '[1, 2')).toMatchObject({ ok: false });
  expect(paramsFrom({ shape: 'json', example: '' }, {}, '[1, 2]')).toEqual({ ok: true, params: [1, 2] });
});

test('no params, enums, defaults and nested values', () => {
  expect(formFor({ type: 'array', maxItems: 0 })).toEqual({ shape: 'none' });
  expect(formFor({ type: 'object', properties: {}, additionalProperties: false })).toEqual({ shape: 'none' });
  const model = formFor({ type: 'object', properties: { mode: { enum: ['fast', 1] }, n: { type: 'integer', default: 3 }, opts: { type: 'object' } } });
  expect(model).toMatchObject({ shape: 'by-name', fields: [{ name: 'mode', kind: 'enum', options: ['fast', 1] }, { name: 'n', initial: '3' }, { name: 'opts', kind: 'json' }] });
  expect(paramsFrom(model, { mode: '1', opts: '{"x": [1]}' })).toEqual({ ok: true, params: { mode: 1, n: 3, opts: { x: [1] } } });
});

test('a -32602 is mapped onto the form\'s fields, without the oneOf noise', () => {
  const model = formFor(pairOrNamed);
  const data = [
    { path: '', keyword: 'type', message: 'must be array' },
    { path: '/a', keyword: 'type', message: 'must be number' },
    { path: '', keyword: 'oneOf', message: 'must match exactly one schema in oneOf' },
  ];
  expect(paramsProblems(model, data)).toEqual({ fields: { a: 'a must be number' }, other: [] });
  expect(paramsProblems(formFor({ type: 'array', items: [{ type: 'number' }, { type: 'number' }] }), [{ path: '/1', message: 'must be number' }])).toEqual({ fields: { '#2': '#2 must be number' }, other: [] });
  expect(paramsProblems(model, { reason: 'a and b must differ' })).toEqual({ fields: {}, other: ['a and b must differ'] });
});
