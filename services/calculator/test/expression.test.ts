import fc from 'fast-check';
import { evaluate, formatResult, ExpressionError, DEFAULT_MAX_DEPTH, DEFAULT_MAX_LENGTH } from '../src/expression';

/** Runs evaluate and returns the ExpressionError it throws, failing the test if it does not. */
function errorOf(expression: string, options?: Parameters<typeof evaluate>[1]): ExpressionError {
  try {
    evaluate(expression, options);
  } catch (err) {
    expect(err).toBeInstanceOf(ExpressionError);
    return err as ExpressionError;
  }
  throw new Error(`expected ${JSON.stringify(expression)} to be rejected`);
}

describe('evaluate: valid expressions', () => {
  test.each<[string, number]>([
    ['1+3+6', 10],
    ['42', 42],
    ['0', 0],
    ['007', 7],
    // precedence
    ['2+3*4', 14],
    ['2*3+4', 10],
    ['(2+3)*4', 20],
    ['2+3%2', 3],
    ['10-4/2', 8],
    // left associativity
    ['8-3-2', 3],
    ['16/4/2', 2],
    ['2-3+4', 3],
    ['100/10*10', 100],
    ['2*3%4', 2],
    ['17%5%3', 2],
    // unary
    ['-5', -5],
    ['+5', 5],
    ['-(2+3)', -5],
    ['2*-3', -6],
    ['--4', 4],
    ['-+-4', 4],
    ['---4', -4],
    ['1 - -1', 2],
    ['-2*-2', 4],
    ['- 4', -4],
    ['-(-(-(1)))', -1],
    // parentheses
    ['(((1)))', 1],
    ['((2+3)*(4-1))/5', 3],
    // decimals and exponent literals
    ['1.5', 1.5],
    ['.5', 0.5],
    ['1.', 1],
    ['1.5+.5', 2],
    ['1e3', 1000],
    ['1E3', 1000],
    ['1e+2', 100],
    ['2.5e-3', 0.0025],
    ['.5e1', 5],
    ['1e-400', 0],
    // float semantics are IEEE, as JavaScript prints them
    ['0.1+0.2', 0.30000000000000004],
    ['10/4', 2.5],
    ['1/3', 1 / 3],
    // % keeps the sign of the dividend, like JavaScript
    ['-7%3', -1],
    ['7%-3', 1],
    ['5.5%2', 1.5],
    // whitespace anywhere between tokens
    ['  1 + 2  ', 3],
    ['\t1\n*\r\n( 2 +3 ) ', 5],
    ['1\u00a0+\u20032', 3],
  ])('%j = %p', (expression, expected) => {
    expect(evaluate(expression)).toBe(expected);
  });

  test('negative zero is preserved by evaluate and hidden by formatResult', () => {
    expect(Object.is(evaluate('-0'), -0)).toBe(true);
    expect(Object.is(evaluate('0*-1'), -0)).toBe(true);
    expect(formatResult(evaluate('0*-1'))).toBe('0');
  });
});

describe('evaluate: invalid expressions', () => {
  test.each<[string, string]>([
    ['', 'Expression is empty'],
    ['   \n\t', 'Expression is empty'],
    ['1/(', 'Unexpected end of expression at position 3'],
    ['1+x', "Unexpected character 'x' at position 2"],
    ['1+', 'Unexpected end of expression at position 2'],
    ['-', 'Unexpected end of expression at position 1'],
    ['*2', "Unexpected '*' at position 0"],
    ['2**3', "Unexpected '*' at position 2"],
    ['()', "Unexpected ')' at position 1"],
    ['(1', "Unexpected end of expression at position 2 (expected ')' to match '(' at position 0)"],
    ['(1 2)', "Unexpected number '2' at position 3"],
    ['1)', "Unmatched ')' at position 1"],
    ['2 3', "Unexpected number '3' at position 2"],
    ['2(3)', "Unexpected '(' at position 1"],
    ['1.2.3', "Unexpected number '.3' at position 3"],
    ['.', "Unexpected character '.' at position 0"],
    ['1 .', "Unexpected character '.' at position 2"],
    ['1e', "Malformed number '1e' at position 0"],
    ['1e+', "Malformed number '1e+' at position 0"],
    ['1e3e4', "Unexpected character 'e' at position 3"],
    ['0x10', "Unexpected character 'x' at position 1"],
    ['1,5', "Unexpected character ',' at position 1"],
    ['2^3', "Unexpected character '^' at position 1"],
    ['1 000', "Unexpected number '000' at position 2"],
    ['1\u0000', 'Unexpected character U+0000 at position 1'],
    ['1+\u{1f600}', 'Unexpected character U+1F600 at position 2'],
    ['Math.PI', "Unexpected character 'M' at position 0"],
    ['process.exit()', "Unexpected character 'p' at position 0"],
    ['1/0', 'Division by zero at position 1'],
    ['5%0', 'Division by zero at position 1'],
    ['1/(2-2)', 'Division by zero at position 1'],
    ['1/-0', 'Division by zero at position 1'],
    ['1/(0*-1)', 'Division by zero at position 1'],
    ['0/0', 'Division by zero at position 1'],
    ['1e308*10', 'Result is not a finite number'],
    ['-1e308-1e308', 'Result is not a finite number'],
    ['1e308/1e-308', 'Result is not a finite number'],
    // Would be a silently wrong 0 if overflow were only checked at the end.
    ['1/(1e308*10)', 'Result is not a finite number'],
    ['1e999', "Number '1e999' at position 0 is too large"],
  ])('%j is rejected with %j', (expression, message) => {
    expect(() => evaluate(expression)).toThrow(ExpressionError);
    expect(() => evaluate(expression)).toThrow(message);
  });

  test('the leftmost problem is the one reported', () => {
    expect(errorOf('1 + + ) x').message).toMatch(/^Unexpected '\)' at position 6/);
    expect(errorOf('1 + x )').message).toMatch(/^Unexpected character 'x' at position 4/);
  });

  test('errors carry the position they name', () => {
    expect(errorOf('1/(').position).toBe(3);
    expect(errorOf('12 + y').position).toBe(5);
    expect(errorOf('4 / 0').position).toBe(2);
    expect(errorOf('').position).toBeUndefined();
  });

  test('ExpressionError is an Error with its own name', () => {
    const err = errorOf('?');
    expect(err).toBeInstanceOf(Error);
    expect(err.name).toBe('ExpressionError');
  });

  test('non-string input from untyped callers is an ExpressionError', () => {
    expect(() => evaluate(42 as unknown as string)).toThrow(ExpressionError);
    expect(() => evaluate(undefined as unknown as string)).toThrow(ExpressionError);
  });
});

describe('evaluate: limits', () => {
  const nested = (depth: number): string => '('.repeat(depth) + '1' + ')'.repeat(depth);

  test('the defaults are 1000 characters and 100 levels', () => {
    expect(DEFAULT_MAX_LENGTH).toBe(1000);
    expect(DEFAULT_MAX_DEPTH).toBe(100);
  });

  test('input of exactly the maximum length is accepted, one more is not', () => {
    expect(evaluate(' '.repeat(DEFAULT_MAX_LENGTH - 1) + '7')).toBe(7);
    const err = errorOf(' '.repeat(DEFAULT_MAX_LENGTH) + '7');
    expect(err.message).toBe('Expression is too long: 1001 characters (limit 1000)');
  });

  test('the length limit applies before any parsing', () => {
    expect(errorOf('x'.repeat(2000)).message).toMatch(/too long/);
  });

  test('the length limit is configurable', () => {
    expect(errorOf('1+2', { maxLength: 2 }).message).toMatch(/too long/);
    expect(evaluate('1+2', { maxLength: 3 })).toBe(3);
    expect(evaluate(`${'1+'.repeat(2000)}1`, { maxLength: 5000 })).toBe(2001);
  });

  test('nesting of exactly the maximum depth is accepted, one more is not', () => {
    expect(evaluate(nested(DEFAULT_MAX_DEPTH))).toBe(1);
    const err = errorOf(nested(DEFAULT_MAX_DEPTH + 1));
    expect(err.message).toBe('Parentheses nested deeper than 100 levels at position 100');
    expect(err.position).toBe(100);
  });

  test('the depth limit is configurable', () => {
    expect(errorOf('((1))', { maxDepth: 1 }).message).toMatch(/nested deeper than 1 levels at position 1/);
    expect(evaluate('(1)', { maxDepth: 1 })).toBe(1);
    expect(errorOf('(1)', { maxDepth: 0 }).message).toMatch(/nested deeper/);
  });

  test('deep nesting is an ExpressionError, not a stack overflow', () => {
    const options = { maxLength: 1_000_000 };
    expect(errorOf('('.repeat(200_000), options).message).toMatch(/nested deeper than 100/);
    expect(errorOf('-('.repeat(200_000), options).message).toMatch(/nested deeper than 100/);
  });

  test('long runs of unary signs do not recurse', () => {
    expect(evaluate(`${'-'.repeat(200_000)}3`, { maxLength: 1_000_000 })).toBe(3);
    expect(evaluate(`${'-+'.repeat(100_001)}3`, { maxLength: 1_000_000 })).toBe(-3);
  });

  test('invalid limits are a programming error, not an ExpressionError', () => {
    for (const options of [{ maxLength: -1 }, { maxDepth: 1.5 }, { maxDepth: Infinity }, { maxLength: NaN }]) {
      expect(() => evaluate('1', options)).toThrow(RangeError);
    }
  });
});

describe('formatResult', () => {
  test.each<[number, string]>([
    [10, '10'],
    [0, '0'],
    [-0, '0'],
    [-2.5, '-2.5'],
    [0.1 + 0.2, '0.30000000000000004'],
    [1 / 3, '0.3333333333333333'],
    [1e21, '1e+21'],
    [1e-7, '1e-7'],
  ])('formatResult(%p) = %j', (n, expected) => {
    expect(formatResult(n)).toBe(expected);
  });

  test('the example from the tool description', () => {
    expect(formatResult(evaluate('1+3+6'))).toBe('10');
  });
});

describe('properties', () => {
  type Op = '+' | '-' | '*' | '/' | '%';
  type Ast =
    | { readonly kind: 'num'; readonly value: number }
    | { readonly kind: 'neg'; readonly arg: Ast }
    | { readonly kind: 'bin'; readonly op: Op; readonly left: Ast; readonly right: Ast };

  const { ast } = fc.letrec<{ ast: Ast }>((tie) => ({
    ast: fc.oneof(
      { depthSize: 'medium', maxDepth: 10 },
      // Tiny values make zero divisors (and so the error path) common.
      fc
        .oneof(fc.integer({ min: -3, max: 3 }), fc.integer({ min: -1000, max: 1000 }))
        .map((value): Ast => ({ kind: 'num', value })),
      tie('ast').map((arg): Ast => ({ kind: 'neg', arg })),
      fc
        .tuple(fc.constantFrom<Op>('+', '-', '*', '/', '%'), tie('ast'), tie('ast'))
        .map(([op, left, right]): Ast => ({ kind: 'bin', op, left, right })),
    ),
  }));

  const render = (node: Ast, sep: string): string => {
    switch (node.kind) {
      case 'num':
        return String(node.value);
      case 'neg':
        // No parentheses of its own, so nested negations and negative
        // literals produce runs of signs such as `--5`.
        return `-${sep}${render(node.arg, sep)}`;
      case 'bin':
        return `(${sep}${render(node.left, sep)}${sep}${node.op}${sep}${render(node.right, sep)}${sep})`;
    }
  };

  type Outcome = { readonly value: number } | { readonly error: 'Division by zero' | 'Result is not a finite number' };

  // Independent of the parser: walks the tree directly, doing the same IEEE
  // operations in the same order, so results must match bit for bit.
  const reference = (node: Ast): Outcome => {
    switch (node.kind) {
      case 'num':
        return { value: node.value };
      case 'neg': {
        const arg = reference(node.arg);
        return 'error' in arg ? arg : { value: -arg.value };
      }
      case 'bin': {
        const left = reference(node.left);
        if ('error' in left) return left;
        const right = reference(node.right);
        if ('error' in right) return right;
        const [l, r] = [left.value, right.value];
        if ((node.op === '/' || node.op === '%') && r === 0) return { error: 'Division by zero' };
        const value = { '+': l + r, '-': l - r, '*': l * r, '/': l / r, '%': l % r }[node.op];
        return Number.isFinite(value) ? { value } : { error: 'Result is not a finite number' };
      }
    }
  };

  test('fully parenthesised integer expressions evaluate like the tree they came from', () => {
    fc.assert(
      fc.property(ast, fc.constantFrom('', ' ', ' \t\n '), (tree, sep) => {
        const text = render(tree, sep);
        const expected = reference(tree);
        if ('value' in expected) {
          expect(evaluate(text, { maxLength: 100_000 })).toBe(expected.value);
        } else {
          expect(() => evaluate(text, { maxLength: 100_000 })).toThrow(expected.error);
        }
      }),
      { numRuns: 500 },
    );
  });

  const totality = (input: string): void => {
    let result: number;
    try {
      result = evaluate(input);
    } catch (err) {
      expect(err).toBeInstanceOf(ExpressionError);
      const { position } = err as ExpressionError;
      if (position !== undefined) {
        expect(position).toBeGreaterThanOrEqual(0);
        expect(position).toBeLessThanOrEqual(input.length);
      }
      return;
    }
    expect(Number.isFinite(result)).toBe(true);
  };

  test('arbitrary strings give a finite number or an ExpressionError', () => {
    fc.assert(fc.property(fc.string(), totality), { numRuns: 1000 });
    fc.assert(fc.property(fc.string({ unit: 'binary' }), totality), { numRuns: 500 });
  });

  test('strings over the grammar alphabet give a finite number or an ExpressionError', () => {
    // fc.string() rarely forms a valid expression; this alphabet reaches deep
    // into the parser, including near-valid numbers and unbalanced parentheses.
    const unit = fc.constantFrom(...'0123456789.eE+-*/%() ', '1e308', '0');
    fc.assert(fc.property(fc.string({ unit, maxLength: 60 }), totality), { numRuns: 3000 });
  });
});
