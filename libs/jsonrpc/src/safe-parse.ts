import secureJson from 'secure-json-parse';
import type { ResolvedDecodeLimits } from './limits';

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
  if (exceedsDepth(text, limits.maxDepth)) return { ok: false, reason: 'too_deep' };
  try {
    return { ok: true, value: secureJson.parse(text, null, { protoAction: 'remove', constructorAction: 'remove' }) as unknown };
  } catch {
    return { ok: false, reason: 'invalid_json' };
  }
}

/**
 * Counts bracket nesting outside strings before parsing, so a hostile
 * `[[[[...` is refused in one linear pass instead of reaching recursive code.
 */
function exceedsDepth(text: string, maxDepth: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > maxDepth) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}
