import { SchemaCompiler } from '../src/schema';

// What TypeBox writes for Type.Object({ color: Type.Union([Type.Literal('red'), Type.Literal('green')]), ... }).
const schema = {
  type: 'object',
  required: ['color', 'size'],
  properties: {
    color: { anyOf: [{ const: 'red', type: 'string' }, { const: 'green', type: 'string' }] },
    size: { anyOf: [{ const: 1, type: 'number' }, { const: 'xl', type: 'string' }] },
    level: { enum: ['low', 'high'], type: 'string' },
    kind: { const: 'order' },
    shape: { oneOf: [{ enum: ['square', 'circle'] }, { const: 'dot' }] },
    either: { anyOf: [{ type: 'string' }, { const: 3 }] },
  },
};

const check = new SchemaCompiler().compile(schema);

describe('Invalid params data names the values an enum, a const or a union of constants allows', () => {
  it('a union of literals (anyOf of const) is one failure listing its values, not one "must be equal to constant" per branch', () => {
    expect(check({ color: 'blue', size: true })).toEqual({
      ok: false,
      details: [
        { path: '/color', keyword: 'anyOf', message: 'must be one of "red", "green"', allowed: ['red', 'green'] },
        { path: '/size', keyword: 'anyOf', message: 'must be one of 1, "xl"', allowed: [1, 'xl'] },
      ],
    });
  });

  it('enum, const and a oneOf of enum and const say their values', () => {
    expect(check({ color: 'red', size: 1, level: 'mid', kind: 'refund', shape: 'line' })).toEqual({
      ok: false,
      details: [
        { path: '/level', keyword: 'enum', message: 'must be one of "low", "high"', allowed: ['low', 'high'] },
        { path: '/kind', keyword: 'const', message: 'must be "order"', allowed: ['order'] },
        { path: '/shape', keyword: 'oneOf', message: 'must be one of "square", "circle", "dot"', allowed: ['square', 'circle', 'dot'] },
      ],
    });
  });

  it('a union that is not all constants keeps ajv\'s failures as they are', () => {
    const failed = check({ color: 'red', size: 1, either: 4 });
    expect(failed).toEqual({
      ok: false,
      details: [
        { path: '/either', keyword: 'type', message: 'must be string' },
        { path: '/either', keyword: 'const', message: 'must be 3', allowed: [3] },
        { path: '/either', keyword: 'anyOf', message: 'must match a schema in anyOf' },
      ],
    });
  });

  it('lists at most 10 values in the message, all of them in allowed', () => {
    const many = Array.from({ length: 12 }, (_, i) => `v${i}`);
    const failed = new SchemaCompiler().compile({ enum: many })('x');
    expect(failed).toEqual({ ok: false, details: [{ path: '', keyword: 'enum', message: `must be one of ${many.slice(0, 10).map((v) => `"${v}"`).join(', ')}, … (12 in all)`, allowed: many }] });
  });
});
