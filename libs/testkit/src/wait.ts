import type { EventEmitter } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';

/** Options for {@link waitFor}. */
export interface WaitForOptions {
  /** Give up after this long (default 5000 ms). */
  timeoutMs?: number;
  /** Pause between checks (default 10 ms). */
  intervalMs?: number;
  /** What was awaited, for the timeout error. */
  message?: string;
}

/**
 * Polls `predicate` until it returns true, rejecting after `timeoutMs`.
 * Only for conditions with no event to await (a Redis key appearing, a queue
 * becoming empty); prefer {@link once} when there is an event. A predicate
 * that throws counts as "not yet"; the last error becomes the timeout's cause.
 */
export async function waitFor(
  predicate: () => boolean | Promise<boolean>,
  { timeoutMs = 5000, intervalMs = 10, message }: WaitForOptions = {},
): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      if (await predicate()) return;
      lastError = undefined;
    } catch (error: unknown) {
      lastError = error;
    }
    const left = deadline - performance.now();
    if (left <= 0) {
      const what = message ?? 'condition not met';
      const options = lastError === undefined ? undefined : { cause: lastError };
      throw new Error(`waitFor timed out after ${timeoutMs} ms: ${what}`, options);
    }
    await sleep(Math.max(1, Math.min(intervalMs, left)));
  }
}

/**
 * Resolves with the arguments of the next `event` on `emitter`, or rejects
 * after `timeoutMs` (default 5000) so a missing event fails the test with a
 * clear message instead of the jest timeout. Like `events.once`, an `'error'`
 * event rejects, except when awaiting `'close'` (which follows it). Listeners and the timer are removed on every path.
 */
export function once<T extends unknown[] = unknown[]>(
  emitter: EventEmitter,
  event: string | symbol,
  timeoutMs = 5000,
): Promise<T> {
  // On streams and sockets 'close' follows 'error', so awaiting 'close' must not fail on it.
  const watchErrors = event !== 'error' && event !== 'close';
  return new Promise<T>((resolve, reject) => {
    const cleanup = (): void => {
      clearTimeout(timer);
      emitter.off(event, onEvent);
      if (watchErrors) emitter.off('error', onError);
    };
    const onEvent = (...args: unknown[]): void => {
      cleanup();
      resolve(args as T);
    };
    const onError = (error: unknown): void => {
      cleanup();
      // Passed through as is: an instanceof check fails across realms (jest).
      reject(error);
    };
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`once: '${String(event)}' not emitted within ${timeoutMs} ms`));
    }, timeoutMs);
    emitter.on(event, onEvent);
    if (watchErrors) emitter.on('error', onError);
  });
}
