import secureJson from 'secure-json-parse';
import type { ResolvedDecodeLimits } from './limits';
import { restoreRawId } from './raw-id';

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
  // A batch's id positions, by message index; a single message's comes back from the scan.
  const batchIds: number[] | undefined = startsWithBracket(text) ? [] : undefined;
  const idAt = scanDepth(text, limits.maxDepth, batchIds);
  if (idAt === tooDeep) return { ok: false, reason: 'too_deep' };
  let value: unknown;
  try {
    value = secureJson.parse(text, null, { protoAction: 'remove', constructorAction: 'remove' }) as unknown;
  } catch {
    return { ok: false, reason: 'invalid_json' };
  }
  if (batchIds) {
    if (Array.isArray(value)) for (let i = 0; i < batchIds.length; i++) restoreRawId(text, value[i], batchIds[i]);
  } else if (idAt >= 0) restoreRawId(text, value, idAt);
  return { ok: true, value };
}

const tooDeep = -2;

function startsWithBracket(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d && c !== 0xfeff) return c === 0x5b;
  }
  return false;
}

/**
 * Counts bracket nesting outside strings before parsing, so a hostile
 * `[[[[...` is refused in one linear pass instead of reaching recursive code:
 * `tooDeep` then.
 *
 * The same pass notes where the `id` member of the message starts (the
 * result, -1 when none), or of each message of a batch (in `batchIds`, by
 * index), so a number id JSON.parse would round or reformat can be kept as
 * its text. A key is only looked at when a two-character string closes at a
 * message's own depth, which costs next to nothing on the other characters.
 */
function scanDepth(text: string, maxDepth: number, batchIds: number[] | undefined): number {
  const keyDepth = batchIds ? 2 : 1;
  let depth = 0;
  let inString = false;
  let stringStart = 0;
  let element = 0;
  let idAt = -1;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped character
      else if (c === 0x22) {
        inString = false;
        // "id" (i - stringStart === 3) as a member name at a message's own depth.
        if (i - stringStart === 3 && depth === keyDepth && text.charCodeAt(i - 2) === 0x69 && text.charCodeAt(i - 1) === 0x64) {
          const colon = afterSpace(text, i + 1);
          if (text.charCodeAt(colon) === 0x3a) {
            if (batchIds) batchIds[element] = colon + 1;
            else idAt = colon + 1;
          }
        }
      }
    } else if (c === 0x22) {
      inString = true;
      stringStart = i;
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > maxDepth) return tooDeep;
    } else if (c === 0x5d || c === 0x7d) depth--;
    // A batch's messages are one level down, counted by the commas between them.
    else if (c === 0x2c && depth === 1 && batchIds) element++;
  }
  return idAt;
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
