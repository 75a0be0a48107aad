import type { JsonValue } from '@warren/jsonrpc';

/**
 * A schedule a service defines in code (the `schedules` service option) and announces with its
 * methods; the broker's scheduler stores it as `source: "service:<name>"` (docs/scheduling.md,
 * "Schedules in code"). The same fields as `schedule.add`, without `paused` (a run-time state an
 * operator sets, kept across re-announcements).
 *
 * @example
 * { name: 'audit-daily-summary', method: 'audit.summary', cron: '0 3 * * *', timezone: 'UTC' }
 */
export interface ScheduleDeclaration {
  /** Unique across the deployment, like a `schedule.add` name (`^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$`). */
  readonly name: string;
  /** The method each occurrence calls, as a client names it (`service.method`). */
  readonly method: string;
  /** Params of every call (an array or an object). @default none */
  readonly params?: JsonValue;
  /** A cron expression (5 fields, or 6 with seconds first); exactly one of `cron` and `everyMs`. */
  readonly cron?: string;
  /** IANA time zone `cron` is read in. @default 'UTC' */
  readonly timezone?: string;
  /** Instead of `cron`: every this many ms (≥ 1000). */
  readonly everyMs?: number;
  /** @default 'skip' */
  readonly overlap?: 'skip' | 'queue' | 'allow';
  /** @default 'none' */
  readonly catchUp?: 'none' | 'last' | 'all';
  /** With `catchUp: 'all'`. @default 10 */
  readonly catchUpMax?: number;
  /** Deadline of each fired call. @default 60000 */
  readonly timeoutMs?: number;
}

/** The fields of {@link ScheduleDeclaration} announcements may carry, in the order they are copied. */
export const scheduleDeclarationFields = ['name', 'method', 'params', 'cron', 'timezone', 'everyMs', 'overlap', 'catchUp', 'catchUpMax', 'timeoutMs'] as const;

/** A copy holding the declaration's known fields only (what travels, what a registry keeps). */
export function copyScheduleDeclaration(d: ScheduleDeclaration): ScheduleDeclaration {
  const copy: Record<string, unknown> = {};
  for (const field of scheduleDeclarationFields) if (d[field] !== undefined) copy[field] = d[field];
  return copy as unknown as ScheduleDeclaration;
}
