/**
 * A call's params as its record keeps them (the last field of its meta, record-codec.ts): the JSON text
 * whole when it is at most {@link maxParamsChars} long, else a truncated marker `!<chars>!` and the
 * first {@link maxParamsChars} characters. Valid JSON never starts with `!`, so the two cannot be
 * confused. Bounded because the record is rewritten by every script of a call and copied into the
 * outcome history (up to 10,000 failures kept).
 */

/** The most characters of a call's params JSON kept on its record. */
export const maxParamsChars = 4096;

/** A call's params as call detail shows them. */
export interface CallParams {
  /** Their JSON text, whole, or its first {@link maxParamsChars} characters when `truncated`. */
  readonly text: string;
  readonly truncated: boolean;
  /** How long the whole JSON text was, in characters. */
  readonly chars: number;
}

/** The stored form of `params` (a request's parsed params); undefined when the request had none. */
export function encodeParams(params: unknown): string | undefined {
  if (params === undefined) return undefined;
  // JSON.stringify escapes every control character, so the text holds no tab or record separator.
  const json = JSON.stringify(params);
  if (json === undefined) return undefined;
  return json.length <= maxParamsChars ? json : `!${json.length}!${json.slice(0, maxParamsChars)}`;
}

/** Reads the stored form back; undefined for an empty field (no params kept). */
export function decodeParams(stored: string | undefined): CallParams | undefined {
  if (stored === undefined || stored === '') return undefined;
  const marker = stored.startsWith('!') ? /^!(\d+)!/.exec(stored) : null;
  if (!marker) return { text: stored, truncated: false, chars: stored.length };
  return { text: stored.slice(marker[0].length), truncated: true, chars: Number(marker[1]) };
}
