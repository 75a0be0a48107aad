import type { JsonValue, Params } from '@warren/jsonrpc';

/** Parses one word as JSON; a word that is not JSON is taken as a string (`hello` → "hello", `5` → 5). */
export function parseWord(word: string): JsonValue {
  try {
    return JSON.parse(word) as JsonValue;
  } catch {
    return word;
  }
}

/**
 * Builds JSON-RPC params from command-line words:
 *
 * - none → no params;
 * - one word that is a JSON array or object → that value, as is
 *   (`'{"minuend":42,"subtrahend":23}'`, `'[1,2,4]'`);
 * - otherwise → an array of the words, each parsed as JSON and falling back
 *   to a string (`4 5` → [4, 5]; `hello 5` → ["hello", 5]).
 *
 * To pass one array as the only positional param, wrap it: `'[[1,2]]'`.
 *
 * @example parseParams(['4', '5']) // [4, 5]
 */
export function parseParams(words: readonly string[]): Params | undefined {
  if (words.length === 0) return undefined;
  if (words.length === 1) {
    const only = parseWord(words[0] as string);
    if (typeof only === 'object' && only !== null) return only;
    return [only];
  }
  return words.map(parseWord);
}

/** `--id 7` is the number 7; `--id abc` the string "abc". */
export function parseId(text: string): string | number {
  return /^-?\d{1,15}$/.test(text) ? Number(text) : text;
}
