/**
 * The last line of an exhaustive `switch` over a tagged union: the compiler
 * proves it unreachable (the argument narrows to `never`); if a value of a
 * newer shape arrives at run time anyway, it throws instead of falling through.
 * Lives in the lowest layer so every package ends its switches with the same one.
 *
 * @example
 * switch (decoded.kind) {
 *   case 'request': return run(decoded);
 *   case 'invalid': return reject(decoded);
 *   default: return assertNever(decoded);
 * }
 */
export function assertNever(value: never, what = 'value'): never {
  throw new TypeError(`unexpected ${what}: ${describe(value)}`);
}

function describe(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
