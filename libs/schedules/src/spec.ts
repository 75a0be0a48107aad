import { Cron } from 'croner';
import { isIntIn, isPositiveInt } from '@warren/config';
import type { JsonSchema, JsonValue } from '@warren/jsonrpc';

/** What runs while an earlier firing of the same schedule is still running. */
export type OverlapPolicy = 'skip' | 'queue' | 'allow';

/**
 * What happens to occurrences missed while no scheduler ran (older than the grace):
 * `none` skips them all, `last` fires the newest one, `all` fires up to `max` of them (the newest).
 */
export type CatchUp = { readonly policy: 'none' } | { readonly policy: 'last' } | { readonly policy: 'all'; readonly max: number };

/** When a schedule fires: a cron expression in a time zone, or a fixed interval. */
export type Timing =
  | { readonly kind: 'cron'; readonly cron: string; readonly timezone: string }
  | { readonly kind: 'interval'; readonly everyMs: number; readonly anchor: number };

/** A schedule, as stored and listed. */
export interface Schedule {
  /** Unique name, e.g. `nightly-report`. */
  readonly name: string;
  /** The method it calls, `service.method` or a bare method name, as a client names it. */
  readonly method: string;
  /** Params of every call. @default none */
  readonly params?: JsonValue;
  readonly timing: Timing;
  /** @default 'skip' */
  readonly overlap: OverlapPolicy;
  /** @default { policy: 'none' } */
  readonly catchUp: CatchUp;
  /** Deadline of each fired call. @default 60000 */
  readonly timeoutMs: number;
  readonly paused: boolean;
  /** When it was added (epoch ms): occurrences before it are never fired. */
  readonly createdAt: number;
  /** `runtime` (schedule.add, the CLI) or `service:<name>` (defined in code by a service). */
  readonly source: string;
}

/** The fields a caller gives to `schedule.add`. */
export interface ScheduleInput {
  readonly name: string;
  readonly method: string;
  readonly params?: JsonValue;
  readonly cron?: string;
  /** IANA time zone of `cron`. @default 'UTC' */
  readonly timezone?: string;
  readonly everyMs?: number;
  readonly overlap?: OverlapPolicy;
  readonly catchUp?: 'none' | 'last' | 'all';
  /** With `catchUp: 'all'`: the most missed occurrences fired. @default 10 */
  readonly catchUpMax?: number;
  readonly timeoutMs?: number;
  readonly paused?: boolean;
}

/** The smallest interval: a 1-second schedule is the finest the scheduler keeps. */
export const minEveryMs = 1000;
const maxCatchUp = 1000;

export const namePattern = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$/;

export const scheduleInputProperties: { readonly [field: string]: JsonSchema } = {
  name: { type: 'string', pattern: namePattern.source },
  method: { type: 'string', minLength: 1, maxLength: 200 },
  params: { type: ['object', 'array'] },
  cron: { type: 'string', minLength: 1, maxLength: 200 },
  timezone: { type: 'string', minLength: 1, maxLength: 100 },
  everyMs: { type: 'integer', minimum: minEveryMs },
  overlap: { enum: ['skip', 'queue', 'allow'] },
  catchUp: { enum: ['none', 'last', 'all'] },
  catchUpMax: { type: 'integer', minimum: 1, maximum: maxCatchUp },
  timeoutMs: { type: 'integer', minimum: 1, maximum: 86_400_000 },
  paused: { type: 'boolean' },
};

/** JSON Schema of `schedule.add`'s params (the dispatcher checks it; {@link parseSchedule} checks the rest). */
export const scheduleInputSchema: JsonSchema = { type: 'object', properties: scheduleInputProperties, required: ['name', 'method'], additionalProperties: false };

/** What parsing a schedule gave: the schedule, or why not (the field and the reason). */
export type Parsed = { readonly ok: true; readonly schedule: Schedule } | { readonly ok: false; readonly field: string; readonly reason: string };

/**
 * Checks `input` and builds the schedule; never throws. Exactly one of `cron` and `everyMs`.
 *
 * @example
 * parseSchedule({ name: 'nightly', method: 'reports.build', cron: '0 2 * * *', timezone: 'Europe/Berlin' }, Date.now(), 'runtime');
 */
export function parseSchedule(input: ScheduleInput, now: number, source: string): Parsed {
  const bad = (field: string, reason: string): Parsed => ({ ok: false, field, reason });
  if (typeof input.name !== 'string' || !namePattern.test(input.name)) return bad('name', `must match ${namePattern.source}`);
  if (typeof input.method !== 'string' || input.method === '') return bad('method', 'must be a method name');
  if ((input.cron === undefined) === (input.everyMs === undefined)) return bad('cron', 'give exactly one of cron and everyMs');
  let timing: Timing;
  if (input.cron !== undefined) {
    const timezone = input.timezone ?? 'UTC';
    if (!validTimeZone(timezone)) return bad('timezone', 'not an IANA time zone');
    try {
      new Cron(input.cron, { timezone, paused: true });
    } catch (err) {
      return bad('cron', err instanceof Error ? err.message : 'not a cron expression');
    }
    timing = { kind: 'cron', cron: input.cron, timezone };
  } else {
    if (input.timezone !== undefined) return bad('timezone', 'only with cron');
    if (!isIntIn(input.everyMs, minEveryMs)) return bad('everyMs', `must be an integer ≥ ${minEveryMs}`);
    timing = { kind: 'interval', everyMs: input.everyMs as number, anchor: now };
  }
  const policy = input.catchUp ?? 'none';
  if (input.catchUpMax !== undefined && policy !== 'all') return bad('catchUpMax', "only with catchUp: 'all'");
  const max = input.catchUpMax ?? 10;
  if (!isIntIn(max, 1, maxCatchUp)) return bad('catchUpMax', `must be an integer from 1 to ${maxCatchUp}`);
  const timeoutMs = input.timeoutMs ?? 60_000;
  if (!isPositiveInt(timeoutMs)) return bad('timeoutMs', 'must be a positive integer');
  const overlap = input.overlap ?? 'skip';
  if (overlap !== 'skip' && overlap !== 'queue' && overlap !== 'allow') return bad('overlap', 'must be skip, queue or allow');
  return {
    ok: true,
    schedule: {
      name: input.name,
      method: input.method,
      ...(input.params === undefined ? {} : { params: input.params }),
      timing,
      overlap,
      catchUp: policy === 'all' ? { policy, max } : { policy },
      timeoutMs,
      paused: input.paused ?? false,
      createdAt: now,
      source,
    },
  };
}

function validTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}
