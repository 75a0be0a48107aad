import type { WireChannel, WireMessage } from '@warren/amqp-transport';
import { ErrorCode, JsonRpcError, isErrorResponse, type JsonValue, type ResponseMessage } from '@warren/jsonrpc';
import { Header, int64 } from '../wire/headers';
import { carriedHeaders, copyProperties } from '../wire/republish';
import { checkInt } from '@warren/config';

/**
 * A method's retry policy: a call whose handler fails with a retryable error is tried again, up to
 * `attempts` attempts in all, after `backoffMs`, doubling per attempt up to `maxBackoffMs`. The wait
 * is RabbitMQ's: the request goes to a delay queue whose TTL dead-letters it back to the service
 * queue (topology.ts), so no process holds a timer for it. The caller's deadline bounds it all: a
 * retry that could not start before the deadline is not made. On a tracked service the policy
 * covers worker loss too: a call whose worker died waits out the same backoff in the same delay
 * queues before a survivor takes it over (the tracker's `retry` decision), and `attempts` bounds
 * those takeovers.
 *
 * @example methods: { 'report.render': { retry: { attempts: 3, backoffMs: 1000 }, handler } }
 */
export interface RetryPolicy {
  /** Attempts in all, the first included (2..10). */
  readonly attempts: number;
  /** Wait before the first retry. */
  readonly backoffMs: number;
  /** Longest wait between two attempts. @default backoffMs × 2^(attempts − 2) (plain doubling) */
  readonly maxBackoffMs?: number;
}

/** Most attempts a policy may ask for: each distinct wait is a queue, so the number of queues stays bounded. */
export const maxRetryAttempts = 10;

/**
 * Throw it from a handler to have the call retried under its method's policy. Without a policy it
 * answers like any JsonRpcError (`code`, default -32603, with its message and data).
 *
 * @example throw new RetryableError('upstream busy', { upstream: 'pdf' })
 */
export class RetryableError extends JsonRpcError {
  override readonly name: string = 'RetryableError';
  constructor(message?: string, data?: JsonValue, options?: { readonly cause?: unknown; readonly code?: number }) {
    super(options?.code ?? ErrorCode.InternalError, message, data, options);
  }

  override get retryable(): boolean {
    return true;
  }
}

/** True for errors marked retryable: a RetryableError, a JsonRpcError with a retryable code, or anything with `retryable: true`. */
export function isRetryable(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { retryable?: unknown }).retryable === true;
}

/** Checks a policy and names the bad field. */
export function assertRetryPolicy(method: string, p: RetryPolicy): void {
  const field = `methods.${method}.retry`;
  checkInt(`${field}.attempts`, p.attempts, { min: 2, max: maxRetryAttempts, expected: `an integer in 2..${maxRetryAttempts}` });
  checkInt(`${field}.backoffMs`, p.backoffMs);
  if (p.maxBackoffMs !== undefined) checkInt(`${field}.maxBackoffMs`, p.maxBackoffMs, { min: p.backoffMs, expected: 'an integer >= backoffMs' });
}

/** The wait after attempt `failed` (1-based) failed. */
export function retryDelayMs(p: RetryPolicy, failed: number): number {
  const doubled = p.backoffMs * 2 ** Math.max(0, failed - 1);
  return Math.min(doubled, p.maxBackoffMs ?? Number.POSITIVE_INFINITY);
}

/** A policy's waits after attempt 1, 2, ..., attempts − 1 failed (`[0]`: the wait before attempt 2). */
export function retrySchedule(p: RetryPolicy): number[] {
  return Array.from({ length: p.attempts - 1 }, (_, i) => retryDelayMs(p, i + 1));
}

/** Every distinct wait the policies can ask for: one delay queue each (bounded: 9 per policy at most). */
export function retryDelays(policies: readonly (RetryPolicy | undefined)[]): number[] {
  const delays = new Set<number>();
  for (const p of policies) if (p) for (const wait of retrySchedule(p)) delays.add(wait);
  return [...delays].sort((a, b) => a - b);
}

/** What to do with a failed attempt of a call whose method has a policy. */
export type RetryPlan =
  | { readonly action: 'retry'; readonly delayMs: number; readonly nextAttempt: number; readonly nextTryAt: number }
  /** Retryable, but no attempt is left: answer the error and dead-letter the request. */
  | { readonly action: 'exhausted' }
  /** Not a retryable failure, or no time left before the deadline for another try: answer as usual. */
  | { readonly action: 'answer' };

/** Decides, for one answered attempt, whether it is retried. Pure. */
export function planRetry(p: RetryPolicy, response: ResponseMessage, failure: unknown, attempt: number, deadline: number, now: number): RetryPlan {
  if (!isErrorResponse(response) || !isRetryable(failure)) return { action: 'answer' };
  if (attempt >= p.attempts) return { action: 'exhausted' };
  const delayMs = retryDelayMs(p, attempt);
  if (now + delayMs >= deadline) return { action: 'answer' };
  return { action: 'retry', delayMs, nextAttempt: attempt + 1, nextTryAt: now + delayMs };
}

/**
 * Sends a failed attempt's request to the delay queue for its wait, as attempt `nextAttempt`. It
 * expires at the call's deadline wherever it is, and RabbitMQ dead-letters it back to the service
 * queue when the delay queue's TTL runs out. The caller acks the original after this, on the same
 * channel: a crash in between redelivers the original rather than losing the call.
 */
export function publishRetry(ch: WireChannel, queue: string, msg: WireMessage, nextAttempt: number, deadline: number, now = Date.now()): void {
  const kept = carriedHeaders(msg.properties.headers);
  kept[Header.attempt] = int64(nextAttempt);
  ch.publish('', queue, msg.content, copyProperties(msg.properties, kept, String(Math.max(1, deadline - now))));
}
