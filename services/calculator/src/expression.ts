// Arithmetic for the `calculate` tool. The input comes straight from a model or
// a user, so it is parsed by hand (never eval/Function) and every failure the
// input can cause surfaces as an ExpressionError the tool can show verbatim.
//
// Grammar (whitespace allowed between any two tokens):
//   expression := term (('+' | '-') term)*
//   term       := unary (('*' | '/' | '%') unary)*
//   unary      := ('+' | '-')* primary
//   primary    := number | '(' expression ')'
//   number     := (digits ['.' [digits]] | '.' digits) [('e' | 'E') ['+' | '-'] digits]

export const DEFAULT_MAX_LENGTH = 1000;
export const DEFAULT_MAX_DEPTH = 100;

export interface EvaluateOptions {
  /** Longest accepted input, in UTF-16 code units. */
  readonly maxLength?: number;
  /** Deepest accepted parenthesis nesting; `((1))` has depth 2. */
  readonly maxDepth?: number;
}

export class ExpressionError extends Error {
  /**
   * 0-based UTF-16 offset into the input the message refers to; undefined for
   * failures that concern the input as a whole (empty, too long).
   */
  readonly position: number | undefined;

  constructor(message: string, position?: number) {
    super(message);
    this.name = 'ExpressionError';
    this.position = position;
  }
}

type Operator = '+' | '-' | '*' | '/' | '%';

type Token =
  | { readonly kind: 'number'; readonly value: number; readonly text: string; readonly pos: number }
  | { readonly kind: 'operator'; readonly op: Operator; readonly pos: number }
  | { readonly kind: 'open' | 'close'; readonly pos: number }
  | { readonly kind: 'end'; readonly pos: number };

const isDigit = (c: string | undefined): boolean => c !== undefined && c >= '0' && c <= '9';
const isSpace = (c: string | undefined): boolean => c !== undefined && /\s/.test(c);

/** Quotes a character so that control and invisible characters stay legible in a message. */
function describeChar(src: string, pos: number): string {
  const cp = src.codePointAt(pos) ?? 0;
  if (cp >= 0x21 && cp <= 0x7e) return `'${String.fromCodePoint(cp)}'`;
  return `U+${cp.toString(16).toUpperCase().padStart(4, '0')}`;
}

function describeToken(token: Token): string {
  switch (token.kind) {
    case 'number':
      return `number '${token.text}'`;
    case 'operator':
      return `'${token.op}'`;
    case 'open':
      return `'('`;
    case 'close':
      return `')'`;
    case 'end':
      return 'end of expression';
  }
}

class Parser {
  private pos = 0;
  private token: Token;

  constructor(
    private readonly src: string,
    private readonly maxDepth: number,
  ) {
    // Lexing on demand means the leftmost problem is reported, whether it is a
    // bad character or a misplaced token.
    this.token = this.lex();
  }

  parse(): number {
    // Checked through a local: narrowing this.token would wrongly outlive the calls below.
    const first = this.token;
    if (first.kind === 'end') throw new ExpressionError('Expression is empty');
    const value = this.expression(0);
    const t = this.token;
    if (t.kind === 'close') throw new ExpressionError(`Unmatched ')' at position ${t.pos}`, t.pos);
    if (t.kind !== 'end') this.unexpected('an operator');
    return value;
  }

  private expression(depth: number): number {
    let left = this.term(depth);
    for (let t = this.token; t.kind === 'operator' && (t.op === '+' || t.op === '-'); t = this.token) {
      this.advance();
      left = apply(t.op, left, this.term(depth), t.pos);
    }
    return left;
  }

  private term(depth: number): number {
    let left = this.unary(depth);
    for (let t = this.token; t.kind === 'operator' && (t.op === '*' || t.op === '/' || t.op === '%'); t = this.token) {
      this.advance();
      left = apply(t.op, left, this.unary(depth), t.pos);
    }
    return left;
  }

  // Iterative so that a long run of signs cannot exhaust the stack; only
  // parentheses recurse, and those are bounded by maxDepth.
  private unary(depth: number): number {
    let negate = false;
    for (let t = this.token; t.kind === 'operator' && (t.op === '+' || t.op === '-'); t = this.token) {
      if (t.op === '-') negate = !negate;
      this.advance();
    }
    const value = this.primary(depth);
    return negate ? -value : value;
  }

  private primary(depth: number): number {
    const t = this.token;
    if (t.kind === 'number') {
      this.advance();
      return t.value;
    }
    if (t.kind === 'open') {
      if (depth >= this.maxDepth) {
        throw new ExpressionError(`Parentheses nested deeper than ${this.maxDepth} levels at position ${t.pos}`, t.pos);
      }
      this.advance();
      const value = this.expression(depth + 1);
      if (this.token.kind !== 'close') this.unexpected(`')' to match '(' at position ${t.pos}`);
      this.advance();
      return value;
    }
    return this.unexpected("a number or '('");
  }

  private unexpected(expected: string): never {
    const t = this.token;
    const head = t.kind === 'end' ? 'Unexpected end of expression' : `Unexpected ${describeToken(t)}`;
    throw new ExpressionError(`${head} at position ${t.pos} (expected ${expected})`, t.pos);
  }

  private advance(): void {
    this.token = this.lex();
  }

  private lex(): Token {
    const src = this.src;
    while (isSpace(src[this.pos])) this.pos++;
    const start = this.pos;
    const c = src[start];
    if (c === undefined) return { kind: 'end', pos: start };
    switch (c) {
      case '+':
      case '-':
      case '*':
      case '/':
      case '%':
        this.pos++;
        return { kind: 'operator', op: c, pos: start };
      case '(':
        this.pos++;
        return { kind: 'open', pos: start };
      case ')':
        this.pos++;
        return { kind: 'close', pos: start };
    }
    if (isDigit(c) || (c === '.' && isDigit(src[start + 1]))) return this.number(start);
    throw new ExpressionError(`Unexpected character ${describeChar(src, start)} at position ${start}`, start);
  }

  private number(start: number): Token {
    const src = this.src;
    let i = start;
    while (isDigit(src[i])) i++;
    if (src[i] === '.') {
      i++;
      while (isDigit(src[i])) i++;
    }
    if (src[i] === 'e' || src[i] === 'E') {
      i++;
      if (src[i] === '+' || src[i] === '-') i++;
      if (!isDigit(src[i])) {
        const text = src.slice(start, i);
        throw new ExpressionError(`Malformed number '${text}' at position ${start}: the exponent has no digits`, start);
      }
      while (isDigit(src[i])) i++;
    }
    this.pos = i;
    const text = src.slice(start, i);
    // The lexer only admits JavaScript numeric literal syntax, so Number() is exact here.
    const value = Number(text);
    if (!Number.isFinite(value)) {
      throw new ExpressionError(`Number '${text}' at position ${start} is too large`, start);
    }
    return { kind: 'number', value, text, pos: start };
  }
}

function apply(op: Operator, left: number, right: number, pos: number): number {
  // `right === 0` also catches -0, which would otherwise yield -Infinity or NaN.
  if ((op === '/' || op === '%') && right === 0) {
    throw new ExpressionError(`Division by zero at position ${pos}`, pos);
  }
  let result: number;
  switch (op) {
    case '+':
      result = left + right;
      break;
    case '-':
      result = left - right;
      break;
    case '*':
      result = left * right;
      break;
    case '/':
      result = left / right;
      break;
    case '%':
      result = left % right;
      break;
  }
  // Checked per operation rather than once at the end: an intermediate
  // Infinity can turn back into a finite, silently wrong answer (1/(1e308*10) = 0).
  if (!Number.isFinite(result)) {
    throw new ExpressionError(`Result is not a finite number: '${op}' at position ${pos} overflows`, pos);
  }
  return result;
}

function limit(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new RangeError(`${name} must be a non-negative integer, got ${String(value)}`);
  }
  return value;
}

/**
 * Evaluates an arithmetic expression with + - * / %, unary + and -, and
 * parentheses, using IEEE double arithmetic (so % follows the sign of the
 * dividend and the result may be -0; see formatResult).
 *
 * @throws ExpressionError for any problem with the expression itself.
 * @throws RangeError if `options` holds an invalid limit (a programming error).
 */
export function evaluate(expression: string, options: EvaluateOptions = {}): number {
  const maxLength = limit('maxLength', options.maxLength, DEFAULT_MAX_LENGTH);
  const maxDepth = limit('maxDepth', options.maxDepth, DEFAULT_MAX_DEPTH);
  // Tool arguments arrive as untyped JSON, so the declared type is not a guarantee.
  if (typeof expression !== 'string') throw new ExpressionError('Expression must be a string');
  if (expression.length > maxLength) {
    throw new ExpressionError(`Expression is too long: ${expression.length} characters (limit ${maxLength})`);
  }
  return new Parser(expression, maxDepth).parse();
}

/** Renders a result the way a user expects to read it; in particular -0 becomes "0". */
export function formatResult(n: number): string {
  return Object.is(n, -0) ? '0' : String(n);
}
