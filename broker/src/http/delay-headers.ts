import { maxDelayMs, type DelayOptions } from '@warren/amqp';

/** The request headers that delay what a POST /rpc body holds (docs/gateway.md, "Delayed calls"). */
export const delayHeaderNames = { delayMs: 'x-delay-ms', notBefore: 'x-not-before' } as const;

/**
 * Reads `X-Delay-Ms: <ms>` (an integer, 0..2^32 − 1) or `X-Not-Before: <time>` (ISO 8601 with a
 * zone, e.g. `2030-01-01T02:00:00Z`, or ms since the epoch): `{}` when neither is given, the
 * client's DelayOptions when one is, undefined when a value is malformed or both are given
 * (refused, never guessed at). A time past means now; one past the longest delay is refused.
 *
 * @example delayOf({ 'x-delay-ms': '600000' }, Date.now()) // { delayMs: 600000 }
 */
export function delayOf(headers: Record<string, string | string[] | undefined>, now: number): DelayOptions | undefined {
  const delay = one(headers[delayHeaderNames.delayMs]);
  const notBefore = one(headers[delayHeaderNames.notBefore]);
  if (delay === null || notBefore === null || (delay !== undefined && notBefore !== undefined)) return undefined;
  if (delay !== undefined) {
    if (!/^\d{1,10}$/.test(delay)) return undefined;
    const delayMs = Number(delay);
    return delayMs <= maxDelayMs ? { delayMs } : undefined;
  }
  if (notBefore === undefined) return {};
  const at = /^\d{1,16}$/.test(notBefore) ? Number(notBefore) : isoWithZone.test(notBefore) ? Date.parse(notBefore) : Number.NaN;
  if (!Number.isFinite(at) || at - now > maxDelayMs) return undefined;
  return { notBefore: at };
}

/** A date and time with a zone (`Z` or `±hh:mm`): a time without one would be read in the gateway's zone, a guess. */
const isoWithZone = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

/** The one value of a header; null when it was repeated with different values. */
function one(value: string | string[] | undefined): string | undefined | null {
  if (value === undefined) return undefined;
  if (!Array.isArray(value)) return value.trim();
  const distinct = new Set(value.map((v) => v.trim()));
  return distinct.size === 1 ? [...distinct][0] : null;
}
