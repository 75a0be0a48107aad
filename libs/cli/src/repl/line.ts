// Reading one REPL line: words split as a shell would (quotes group, backslash escapes), and
// params written as JSON, as positional words, or as name=value words.
import type { JsonObject, Params } from '@warren/jsonrpc';
import { UsageError } from '../errors';
import { parseWord } from '../params';

/**
 * Splits a line into words: blanks separate, '…' and "…" group (the quotes go), a backslash
 * escapes the next character. An unterminated quote is a usage error.
 *
 * @example words(`call greet name='Ada Lovelace'`) // ['call', 'greet', 'name=Ada Lovelace']
 */
export function words(line: string): string[] {
  const out: string[] = [];
  let word: string | undefined;
  let quote: '"' | "'" | undefined;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i] as string;
    if (quote !== undefined) {
      if (ch === quote) quote = undefined;
      else if (ch === '\\' && quote === '"' && i + 1 < line.length) word += line[++i] as string;
      else word += ch;
    } else if (ch === '"' || ch === "'") {
      quote = ch;
      word ??= '';
    } else if (ch === '\\' && i + 1 < line.length) {
      word = (word ?? '') + (line[++i] as string);
    } else if (/\s/.test(ch)) {
      if (word !== undefined) out.push(word);
      word = undefined;
    } else {
      word = (word ?? '') + ch;
    }
  }
  if (quote !== undefined) throw new UsageError(`unterminated ${quote} quote`);
  if (word !== undefined) out.push(word);
  return out;
}

const named = /^([A-Za-z_$][\w$.-]*)=(.*)$/s;

/**
 * The params of `call METHOD REST`: REST starting with `[` or `{` is one JSON value (spaces
 * allowed: `{"a": 1}`); otherwise its words are all `name=value` (by name) or all positional,
 * each value parsed as JSON and else taken as a string. Nothing: no params.
 *
 * @example lineParams('minuend=42 subtrahend=23') // { minuend: 42, subtrahend: 23 }
 * @example lineParams('4 5') // [4, 5]
 */
export function lineParams(rest: string): Params | undefined {
  const trimmed = rest.trim();
  if (trimmed === '') return undefined;
  if (trimmed.startsWith('[') || trimmed.startsWith('{')) {
    try {
      return JSON.parse(trimmed) as Params;
    } catch (err) {
      throw new UsageError(`params are not JSON: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  const list = words(trimmed);
  const pairs = list.map((w) => named.exec(w));
  if (pairs.every((p) => p !== null)) {
    const object: JsonObject = {};
    for (const p of pairs) object[p[1] as string] = parseWord(p[2] as string);
    return object;
  }
  if (pairs.some((p) => p !== null)) throw new UsageError('give params all by name (name=value) or all by position, not both');
  return list.map(parseWord);
}

/** The first word and the text after it (kept raw: params parse it their own way). */
export function splitCommand(line: string): { readonly head: string; readonly rest: string } {
  const m = /^\s*(\S+)\s*([\s\S]*)$/.exec(line);
  return m === null ? { head: '', rest: '' } : { head: m[1] as string, rest: m[2] as string };
}
