import secureJson from 'secure-json-parse';
import type { ResolvedDecodeLimits } from './limits';
import { restoreRawId, type IdPositions } from './raw-id';

/** Why a payload was refused before or during parsing. */
export type ParseFailure = 'invalid_json' | 'invalid_utf8' | 'too_large' | 'too_deep';

export type ParseOutcome = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly reason: ParseFailure };

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/**
 * Parses untrusted JSON without ever throwing. Prototype-poisoning keys
 * (`__proto__`, `constructor.prototype`) are removed rather than rejected,
 * because they are legal JSON: dropping them keeps the rest of the message
 * usable while making sure they never reach an object's prototype.
 */
export function safeParse(input: string | Uint8Array, limits: ResolvedDecodeLimits): ParseOutcome {
  let text: string;
  if (typeof input === 'string') {
    // A UTF-16 unit is at most 3 UTF-8 bytes: the cheap check settles most inputs.
    if (input.length * 3 > limits.maxBytes && Buffer.byteLength(input, 'utf8') > limits.maxBytes) return { ok: false, reason: 'too_large' };
    text = input;
  } else {
    if (input.byteLength > limits.maxBytes) return { ok: false, reason: 'too_large' };
    try {
      text = utf8.decode(input);
    } catch {
      return { ok: false, reason: 'invalid_utf8' };
    }
  }
  const ids: IdPositions = new Map();
  if (exceedsDepth(text, limits.maxDepth, ids)) return { ok: false, reason: 'too_deep' };
  let value: unknown;
  try {
    value = secureJson.parse(text, null, { protoAction: 'remove', constructorAction: 'remove' }) as unknown;
  } catch {
    return { ok: false, reason: 'invalid_json' };
  }
  if (ids.size > 0) {
    if (Array.isArray(value)) for (const [index, position] of ids) restoreRawId(text, value[index], position);
    else restoreRawId(text, value, ids.get(0));
  }
  return { ok: true, value };
}

/**
 * Counts bracket nesting outside strings before parsing, so a hostile
 * `[[[[...` is refused in one linear pass instead of reaching recursive code.
 *
 * The same pass notes where each message's `id` member starts (in `ids`, by
 * message), so a number id JSON.parse would round or reformat can be kept
 * as its text: a key is only looked at when a two-character string closes at
 * a message's own depth, which costs next to nothing on the other characters.
 */
function exceedsDepth(text: string, maxDepth: number, ids: IdPositions): boolean {
  let depth = 0;
  let inString = false;
  let stringStart = 0;
  let keyDepth = 1;
  let element = 0;
  let first = true;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped character
      else if (c === 0x22) {
        inString = false;
        // "id" (i - stringStart === 3) as a member name at a message's own depth.
        if (i - stringStart === 3 && depth === keyDepth && text.charCodeAt(i - 2) === 0x69 && text.charCodeAt(i - 1) === 0x64) {
          const colon = afterSpace(text, i + 1);
          if (text.charCodeAt(colon) === 0x3a) ids.set(element, colon + 1);
        }
      }
    } else if (c === 0x22) {
      inString = true;
      stringStart = i;
    } else if (c === 0x5b || c === 0x7b) {
      // A batch's messages are one level down, counted by the commas between them.
      if (first && c === 0x5b) keyDepth = 2;
      if (++depth > maxDepth) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
    else if (c === 0x2c && depth === 1 && keyDepth === 2) element++;
    if (first && c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d && c !== 0xfeff) first = false;
  }
  return false;
}

function afterSpace(text: string, from: number): number {
  let i = from;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) break;
    i++;
  }
  return i;
}
