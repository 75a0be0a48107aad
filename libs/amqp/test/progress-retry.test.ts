// The pure parts of progress and retries: the per-call throttle (under fake timers), the progress
// wire form (pushed and stored alike), the retry plan and its bounded set of delay-queue waits, and
// what a republished copy (a retry, a dead letter) keeps of the original's properties and headers.
import { ErrorCode, JsonRpcError, failureResponse, successResponse } from '@warren/jsonrpc';
import { ProgressReporter, decodeProgress, encodeProgress, progressOf, type Progress } from '../src/wire/progress';
import type { MessageProperties } from 'amqplib';
import { RetryableError, assertRetryPolicy, isRetryable, planRetry, retryDelayMs, retryDelays, retrySchedule } from '../src/runtime/retry';
import { carriedHeaders, copyProperties } from '../src/wire/republish';

describe('ProgressReporter', () => {
  beforeEach(() => jest.useFakeTimers({ now: 1_000_000 }));
  afterEach(() => jest.useRealTimers());

  it('passes the first report at once, holds later ones to one per interval, and always writes the last', () => {
    const sent: Progress[] = [];
    const r = new ProgressReporter((p) => sent.push(p), 250);
    r.report(0.1, 'a');
    r.report(0.2, 'b');
    r.report(0.3, 'c');
    expect(sent.map((p) => p.message)).toEqual(['a']);
    jest.advanceTimersByTime(249);
    expect(sent).toHaveLength(1);
    jest.advanceTimersByTime(1);
    expect(sent.map((p) => p.message)).toEqual(['a', 'c']);
    jest.advanceTimersByTime(1000);
    r.report(0.4, 'd');
    expect(sent.map((p) => p.message)).toEqual(['a', 'c', 'd']);
  });

  it('flush writes what is held back at once, clears its timer, and ignores reports after it', () => {
    const sent: Progress[] = [];
    const r = new ProgressReporter((p) => sent.push(p), 250);
    r.report(0.5);
    r.report(1, 'last');
    r.flush();
    expect(sent.map((p) => p.fraction)).toEqual([0.5, 1]);
    expect(jest.getTimerCount()).toBe(0);
    r.report(0.9);
    r.flush();
    expect(sent).toHaveLength(2);
  });

  it('clamps the fraction into 0..1, cuts long messages, and refuses what is not a number', () => {
    expect(progressOf(1.5, undefined, 1).fraction).toBe(1);
    expect(progressOf(-2, undefined, 1).fraction).toBe(0);
    expect(progressOf(0.5, 'x'.repeat(500), 1).message).toHaveLength(200);
    expect(() => progressOf(Number.NaN, undefined, 1)).toThrow(TypeError);
    expect(() => progressOf('0.5' as unknown as number, undefined, 1)).toThrow(TypeError);
  });

  it('round-trips on the wire and reads garbage as nothing', () => {
    expect(decodeProgress(encodeProgress({ fraction: 0.25, message: 'm', at: 5 }))).toEqual({ fraction: 0.25, message: 'm', at: 5 });
    for (const bad of ['', 'null', '{"fraction":"1","at":1}', '{"fraction":1}', '[1]', '{"fraction":1e999,"at":1}']) expect(decodeProgress(Buffer.from(bad))).toBeUndefined();
  });
});

describe('retry plan', () => {
  const policy = { attempts: 3, backoffMs: 100, maxBackoffMs: 150 };
  const failed = failureResponse(1, { code: ErrorCode.InternalError, message: 'x' });

  it('doubles the wait per attempt up to maxBackoffMs, and lists each distinct wait once', () => {
    expect([1, 2, 3].map((n) => retryDelayMs(policy, n))).toEqual([100, 150, 150]);
    expect(retryDelays([policy, { attempts: 4, backoffMs: 100 }, undefined])).toEqual([100, 150, 200, 400]);
  });

  it('retries a retryable failure while attempts and time are left, then says exhausted', () => {
    expect(planRetry(policy, failed, new RetryableError(), 1, 10_000, 0)).toEqual({ action: 'retry', delayMs: 100, nextAttempt: 2, nextTryAt: 100 });
    expect(planRetry(policy, failed, new RetryableError(), 3, 10_000, 0)).toEqual({ action: 'exhausted' });
    // The deadline bounds it: no retry that could not start before it.
    expect(planRetry(policy, failed, new RetryableError(), 1, 100, 0)).toEqual({ action: 'answer' });
    expect(planRetry(policy, failed, new Error('plain'), 1, 10_000, 0)).toEqual({ action: 'answer' });
    expect(planRetry(policy, successResponse(1, 5), undefined, 1, 10_000, 0)).toEqual({ action: 'answer' });
  });

  it('counts retryable codes and flagged errors as retryable, and checks policies by field', () => {
    expect(isRetryable(new JsonRpcError(ErrorCode.Overloaded))).toBe(true);
    expect(isRetryable(new JsonRpcError(ErrorCode.InvalidParams))).toBe(false);
    expect(isRetryable(Object.assign(new Error('busy'), { retryable: true }))).toBe(true);
    expect(new RetryableError('m').code).toBe(ErrorCode.InternalError);
    expect(() => assertRetryPolicy('m', { attempts: 1, backoffMs: 10 })).toThrow(/retry\.attempts/);
    expect(() => assertRetryPolicy('m', { attempts: 11, backoffMs: 10 })).toThrow(/retry\.attempts/);
    expect(() => assertRetryPolicy('m', { attempts: 2, backoffMs: 0 })).toThrow(/retry\.backoffMs/);
    expect(() => assertRetryPolicy('m', { attempts: 2, backoffMs: 10, maxBackoffMs: 5 })).toThrow(/retry\.maxBackoffMs/);
  });
});

describe('republished copies', () => {
  it('reads progress text as a fresh report is made: the stored copy and the pushed message alike', () => {
    expect(decodeProgress(JSON.stringify({ fraction: -1, message: 'm'.repeat(300), at: 1 }))).toEqual({ fraction: 0, message: 'm'.repeat(200), at: 1 });
    expect(decodeProgress('not json')).toBeUndefined();
  });

  it('keeps the caller\'s headers (integers written as l), drops RabbitMQ\'s bookkeeping and the names asked for', () => {
    const headers = { traceparent: 't', 'x-warren-deadline': 5, 'x-death': [{}], 'x-delivery-count': 2, 'x-first-death-queue': 'q', 'x-last-death-reason': 'expired', 'x-warren-attempt': 2 };
    const long = (value: number) => ({ '!': 'long', value });
    expect(carriedHeaders(headers)).toEqual({ traceparent: 't', 'x-warren-deadline': long(5), 'x-warren-attempt': long(2) });
    expect(carriedHeaders(headers, new Set(['x-warren-attempt']))).toEqual({ traceparent: 't', 'x-warren-deadline': long(5) });
    expect(carriedHeaders(undefined)).toEqual({});
  });

  it('copies the properties but user id and expiration, with the copy\'s own headers and expiration', () => {
    const properties = { correlationId: 'c', replyTo: 'r', contentType: 'application/json', userId: 'guest', expiration: '100', headers: { a: 1 }, messageId: undefined } as unknown as MessageProperties;
    expect(copyProperties(properties, { b: 2 })).toEqual({ correlationId: 'c', replyTo: 'r', contentType: 'application/json', headers: { b: 2 } });
    expect(copyProperties(properties, {}, '50')).toMatchObject({ expiration: '50', headers: {} });
  });

  it('gives a policy\'s waits after each failed attempt, the ones the delay queues are declared for', () => {
    expect(retrySchedule({ attempts: 4, backoffMs: 100, maxBackoffMs: 300 })).toEqual([100, 200, 300]);
    expect(retryDelays([{ attempts: 4, backoffMs: 100, maxBackoffMs: 300 }])).toEqual([100, 200, 300]);
  });
});
