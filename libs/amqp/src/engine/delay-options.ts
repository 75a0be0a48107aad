import { isDelayMs, maxDelayMs } from '../wire/delay';

/**
 * When a call, job or notification should start (docs/scheduling.md, "Delayed calls"). Give one or
 * neither. The message waits in RabbitMQ's delay chain (wire/delay.ts), durably, and reaches its
 * service when due; a call's deadline counts from then.
 *
 * @example await client.enqueue('report.render', { size: 7 }, { delayMs: 10 * 60_000 })
 * @example client.call('invoice.send', [42], { notBefore: new Date('2030-01-01T02:00:00Z'), timeoutMs: 60_000 })
 */
export interface DelayOptions {
  /** Start no earlier than this: a Date or ms since the epoch. A time already past means now. @default now */
  readonly notBefore?: Date | number;
  /** Start no earlier than this many ms from now, an integer in 0..2^32 − 1 (49.7 days). @default 0 */
  readonly delayMs?: number;
}

/**
 * When the message is due (ms since the epoch), or undefined when it goes at once (no delay, a
 * delay of 0, a `notBefore` already past). Throws a RangeError naming the bad field.
 */
export function dueAtOf(opts: DelayOptions, now: number): number | undefined {
  const { notBefore, delayMs } = opts;
  if (notBefore !== undefined && delayMs !== undefined) throw new RangeError('give delayMs or notBefore, not both');
  let delay = 0;
  if (delayMs !== undefined) {
    if (!isDelayMs(delayMs)) throw new RangeError(`delayMs must be an integer in 0..${maxDelayMs}, got ${String(delayMs)}`);
    delay = delayMs;
  } else if (notBefore !== undefined) {
    const at = notBefore instanceof Date ? notBefore.getTime() : notBefore;
    if (typeof at !== 'number' || !Number.isFinite(at)) throw new RangeError('notBefore must be a valid Date or ms since the epoch');
    delay = Math.ceil(at - now);
    if (delay > maxDelayMs) throw new RangeError(`notBefore must be at most ${maxDelayMs} ms (49.7 days) from now`);
  }
  return delay > 0 ? now + delay : undefined;
}
