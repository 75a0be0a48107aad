import { checkInt, checkPositiveInts, definedOnly, isIntIn, isPositiveInt, resolveOptions } from '../src/options';

describe('the options kernel', () => {
  it('lays the given fields over the defaults, an undefined field keeping its default', () => {
    expect(definedOnly({ a: 1, b: undefined })).toEqual({ a: 1 });
    expect(resolveOptions({ pollMs: 1000, maxClients: 32 }, { maxClients: 8 })).toEqual({ pollMs: 1000, maxClients: 8 });
    expect(resolveOptions({ pollMs: 1000 }, { pollMs: undefined })).toEqual({ pollMs: 1000 });
  });

  it('tells integers in a range', () => {
    for (const good of [1, 2 ** 53 - 1]) expect(isPositiveInt(good)).toBe(true);
    for (const bad of [0, -1, 1.5, NaN, Infinity, 2 ** 53, '3', undefined]) expect(isPositiveInt(bad)).toBe(false);
    expect(isIntIn(0, 0, 10)).toBe(true);
    expect(isIntIn(11, 0, 10)).toBe(false);
  });

  it('names the bad field and the value, as every resolver did by hand', () => {
    expect(() => checkPositiveInts('ClientOptions', { maxPending: 0, defaultTimeoutMs: 5 }, ['defaultTimeoutMs', 'maxPending'])).toThrow(new RangeError('ClientOptions.maxPending must be a positive integer, got 0'));
    expect(() => checkPositiveInts('X', { a: undefined as number | undefined }, ['a'], true)).not.toThrow();
    expect(() => checkPositiveInts('X', { a: undefined as number | undefined }, ['a'])).toThrow('X.a must be a positive integer, got undefined');
    expect(() => checkInt('GatewayOptions.port', 70_000, { min: 0, max: 65535, expected: '0-65535' })).toThrow(new RangeError('GatewayOptions.port must be 0-65535, got 70000'));
    expect(() => checkInt('GatewayOptions.port', 0, { min: 0, max: 65535 })).not.toThrow();
    expect(() => checkInt('batch size', 1.5)).toThrow(RangeError);
  });
});
