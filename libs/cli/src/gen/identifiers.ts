// Method names become identifiers: camelCase in TypeScript, snake_case in Python, PascalCase for
// type names. Any method name is allowed on the wire (`report.render`, `tools/call`, `2fa`), so
// each is split into words, kept to identifier characters, kept off the language's reserved
// words, and made unique in a fixed order (the sorted names), so the output never depends on luck.

/** The words of a method name: `report.render` → report, render; `notifyEvent` → notify, event; `get_data` → get, data. */
export function words(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w.toLowerCase());
}

const capital = (w: string): string => w.charAt(0).toUpperCase() + w.slice(1);

export const camel = (name: string): string => words(name).map((w, i) => (i === 0 ? w : capital(w))).join('');
export const pascal = (name: string): string => words(name).map(capital).join('');
export const snake = (name: string): string => words(name).join('_');

/**
 * Hands out identifiers: each wanted one as is when free, else with `_2`, `_3`... Names are
 * compared case-insensitively, because the type names (PascalCase) must be unique too.
 */
export class Identifiers {
  private readonly taken = new Set<string>();

  constructor(reserved: readonly string[]) {
    for (const r of reserved) this.taken.add(r.toLowerCase());
  }

  take(wanted: string, fallback: string): string {
    let base = wanted.length === 0 ? fallback : /^[0-9]/.test(wanted) ? `${fallback}${wanted.charAt(0).toUpperCase()}${wanted.slice(1)}` : wanted;
    if (this.taken.has(base.toLowerCase())) base = `${base}_`;
    let candidate = base;
    for (let n = 2; this.taken.has(candidate.toLowerCase()); n++) candidate = `${base}${n}`;
    this.taken.add(candidate.toLowerCase());
    return candidate;
  }
}

/** TypeScript's reserved words and strict-mode ones, and the names the generated module itself exports. */
export const typescriptReserved = [
  'break', 'case', 'catch', 'class', 'const', 'continue', 'debugger', 'default', 'delete', 'do', 'else', 'enum', 'export', 'extends', 'false',
  'finally', 'for', 'function', 'if', 'import', 'in', 'instanceof', 'new', 'null', 'return', 'super', 'switch', 'this', 'throw', 'true', 'try',
  'typeof', 'var', 'void', 'while', 'with', 'as', 'implements', 'interface', 'let', 'package', 'private', 'protected', 'public', 'static',
  'yield', 'await', 'any', 'unknown', 'never', 'object', 'string', 'number', 'boolean', 'symbol', 'undefined', 'arguments', 'eval',
  'proxy', 'notifier', 'errorOf', 'Caller', 'MethodError', 'Api', 'Notifications', 'CallOptions', 'NotifyOptions', 'wireErrorOf',
];

/** Python's keywords and builtins the module uses, and the names it defines. */
export const pythonReserved = [
  'False', 'None', 'True', 'and', 'as', 'assert', 'async', 'await', 'break', 'class', 'continue', 'def', 'del', 'elif', 'else', 'except',
  'finally', 'for', 'from', 'global', 'if', 'import', 'in', 'is', 'lambda', 'nonlocal', 'not', 'or', 'pass', 'raise', 'return', 'try',
  'while', 'with', 'yield', 'match', 'case', 'type', 'self', 'params', 'timeout', 'persistent', 'client',
  'Api', 'Notifications', 'WarrenClient', 'WarrenError', 'connect', 'Any', 'Dict', 'List', 'Literal', 'Optional', 'Tuple', 'TypedDict', 'Union', 'NotRequired',
];
