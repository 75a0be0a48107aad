import { randomBytes } from 'node:crypto';

let counter = 0;

/**
 * A short unique name (`prefix-pid-counter-random`, lowercase `[a-z0-9-]`),
 * safe as an AMQP queue/exchange name and a Redis key. Tests share one broker
 * and one Redis, and jest runs files in parallel workers, so every queue,
 * exchange and key a test creates must not collide with another test's:
 * the pid separates workers, the counter separates calls, the random part
 * separates runs (leftovers from a crashed run).
 */
export function uniqueName(prefix = 'test'): string {
  counter += 1;
  return `${prefix}-${process.pid.toString(36)}-${counter.toString(36)}-${randomBytes(3).toString('hex')}`;
}
