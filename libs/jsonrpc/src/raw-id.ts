/**
 * A number id whose JSON text a JavaScript number cannot give back: an
 * integer beyond 2^53 (`9007199254740993`), a non-canonical form (`1.0`,
 * `1e3`, `-0`) or a long decimal. JSON-RPC says the server echoes the id it
 * received, so such an id is kept as its source text and written back
 * byte for byte by `encode`/`encodeResponse`. Ids JSON.parse keeps exactly
 * (strings, null, canonical safe integers and short decimals) stay plain
 * values: only the rare id pays for this.
 *
 * `toJSON` gives the nearest number, for code that serializes a message
 * with plain `JSON.stringify` (lossy, as before); the encoders never use it.
 */
export class RawNumberId {
  constructor(readonly text: string) {}

  toJSON(): number {
    return Number(this.text);
  }

  toString(): string {
    return this.text;
  }
}

/** True when `value` is a raw number id. */
export function isRawNumberId(value: unknown): value is RawNumberId {
  return value instanceof RawNumberId;
}

/**
 * Keeps the source text of a number id JSON.parse could not keep exactly.
 * `item` is one parsed message (an object, or anything else, left alone);
 * `position` is where its `id` member's value starts (after the colon).
 */
export function restoreRawId(text: string, item: unknown, position: number | undefined): void {
  if (position === undefined || typeof item !== 'object' || item === null) return;
  const record = item as Record<string, unknown>;
  const id = record['id'];
  if (typeof id !== 'number') return;
  // Not finite (1e309, 1E400): JSON.parse made it Infinity, but it was a valid JSON number, so it comes back
  // as written, like every number id (protocol v1.1; v1 refused it with -32600 and a null id).
  if (!Number.isFinite(id)) {
    const token = numberToken(text, position);
    if (token !== undefined) record['id'] = new RawNumberId(token);
    return;
  }
  // The common case, a safe integer written plainly, is settled without making a string.
  if (Number.isSafeInteger(id) && plainInteger(text, position, id)) return;
  const token = numberToken(text, position);
  if (token !== undefined && token !== String(id)) record['id'] = new RawNumberId(token);
}

/** True when the literal at `from` is digits only (JSON allows no leading zeros), so it reads back as written; `-0` does not. */
function plainInteger(text: string, from: number, id: number): boolean {
  let i = from;
  while (i < text.length && isSpace(text.charCodeAt(i))) i++;
  if (text.charCodeAt(i) === 0x2d) {
    if (id === 0) return false;
    i++;
  }
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c < 0x30 || c > 0x39) return c !== 0x2e && c !== 0x65 && c !== 0x45;
    i++;
  }
  return true;
}

/** The JSON number literal at `from` (after optional whitespace), or undefined if there is none. */
function numberToken(text: string, from: number): string | undefined {
  let i = from;
  while (i < text.length && isSpace(text.charCodeAt(i))) i++;
  const start = i;
  while (i < text.length && isNumberChar(text.charCodeAt(i))) i++;
  return i > start ? text.slice(start, i) : undefined;
}

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
}

/** 0-9 - + . e E */
function isNumberChar(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || c === 0x2d || c === 0x2b || c === 0x2e || c === 0x65 || c === 0x45;
}
