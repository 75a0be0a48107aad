// The options kernel: every options resolver in Warren has the same shape (an
// interface with a documented default on each field, a defaults object, one
// resolve-and-validate function that names the bad field). These are the
// pieces they share, so a bad number reads the same whichever library
// refuses it: `<Kind>.<field> must be a positive integer, got <value>`.

/** A copy of `value` without its undefined properties, for spreading over defaults. */
export function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/**
 * The defaults with the given fields laid over them; a field given as `undefined` keeps its default.
 *
 * @example resolveOptions({ pollMs: 1000, maxClients: 32 }, { maxClients: 8 }) // { pollMs: 1000, maxClients: 8 }
 */
export function resolveOptions<D extends object>(defaults: D, given: { readonly [K in keyof D]?: D[K] | undefined }): D {
  return { ...defaults, ...(definedOnly(given) as Partial<D>) };
}

/** Whether `value` is a safe integer in `min..max` (for validators that return a verdict instead of throwing). */
export function isIntIn(value: unknown, min: number, max = Number.MAX_SAFE_INTEGER): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= min && value <= max;
}

/** Whether `value` is a whole number from 1 up to 2^53 − 1. */
export function isPositiveInt(value: unknown): value is number {
  return isIntIn(value, 1);
}

/** The range an integer must fall in, and how the error says so. */
export interface IntRange {
  /** @default 1 */
  readonly min?: number;
  /** @default Number.MAX_SAFE_INTEGER */
  readonly max?: number;
  /** Ends "must be …" in the error. @default 'a positive integer' */
  readonly expected?: string;
}

/**
 * Throws a RangeError naming `label` unless `value` is a safe integer in the range.
 *
 * @example checkInt('GatewayOptions.port', 70000, { min: 0, max: 65535, expected: '0-65535' }) // throws "GatewayOptions.port must be 0-65535, got 70000"
 */
export function checkInt(label: string, value: unknown, range: IntRange = {}): asserts value is number {
  const { min = 1, max = Number.MAX_SAFE_INTEGER, expected = 'a positive integer' } = range;
  if (!isIntIn(value, min, max)) {
    throw new RangeError(`${label} must be ${expected}, got ${String(value)}`);
  }
}

/**
 * Checks that each of `fields` of a resolved options object is a positive integer; the error names
 * `<kind>.<field>`. Fields left undefined are skipped when `optional` (fields without a default).
 *
 * @example checkPositiveInts('ClientOptions', resolved, ['defaultTimeoutMs', 'maxPending'])
 */
export function checkPositiveInts<T extends object>(kind: string, resolved: T, fields: readonly (keyof T & string)[], optional = false): void {
  for (const field of fields) {
    const value = resolved[field];
    if (optional && value === undefined) continue;
    checkInt(`${kind}.${field}`, value);
  }
}
