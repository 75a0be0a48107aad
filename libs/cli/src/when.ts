import { maxDelayMs, type DelayOptions } from '@warren/amqp';
import { UsageError } from './errors';

/** How many ms each duration unit is. */
const unitMs: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * A duration as people write it: `500ms`, `90s`, `10m`, `1h30m`, `2d`, or plain milliseconds
 * (`1500`). Throws a UsageError for anything else, or past 2^32 − 1 ms (49.7 days).
 *
 * @example parseDuration('1h30m') // 5400000
 */
export function parseDuration(text: string): number {
  const t = text.trim();
  if (/^\d{1,10}$/.test(t)) return checked(Number(t), text);
  const parts = [...t.matchAll(/(\d{1,10})(ms|s|m|h|d)/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join('') !== t) throw new UsageError(`--in wants a duration such as 90s, 10m, 1h30m, 2d or milliseconds; got ${JSON.stringify(text)}`);
  return checked(parts.reduce((ms, p) => ms + Number(p[1]) * (unitMs[p[2] as string] as number), 0), text);
}

/**
 * A time to start at: ISO 8601 (`2030-01-01T02:00:00Z`, `2030-01-01T02:00+01:00`; without a zone,
 * this machine's local time; a space may stand for the `T`). ms since the epoch.
 */
export function parseAt(text: string, now: number): number {
  const t = text.trim().replace(/^(\d{4}-\d{2}-\d{2}) (\d)/, '$1T$2');
  const at = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})?$/.test(t) ? Date.parse(t) : Number.NaN;
  if (!Number.isFinite(at)) throw new UsageError(`--at wants an ISO 8601 time such as 2030-01-01T02:00:00Z; got ${JSON.stringify(text)}`);
  if (at - now > maxDelayMs) throw new UsageError('--at must be at most 49.7 days (2^32 − 1 ms) from now');
  return at;
}

/** `--at` / `--in` as the client's delay options (`{}` for neither); both at once is a usage error. */
export function delayFlags(flags: { readonly at?: string; readonly in?: string }, now = Date.now()): DelayOptions {
  if (flags.at !== undefined && flags.in !== undefined) throw new UsageError('give --at or --in, not both');
  if (flags.in !== undefined) return { delayMs: parseDuration(flags.in) };
  if (flags.at !== undefined) return { notBefore: parseAt(flags.at, now) };
  return {};
}

function checked(ms: number, text: string): number {
  if (ms > maxDelayMs) throw new UsageError(`--in must be at most 49.7 days (2^32 − 1 ms); got ${JSON.stringify(text)}`);
  return ms;
}
