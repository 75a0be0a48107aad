import { ErrorCode } from '@warren/jsonrpc';
import {
  decodeMeta, encodeMeta, encodeOwner, outcomeResponse, parseClaimReply, parseRecord, parseStoredId, parseStoredResponse, parseWorkersReply, recordSeparator, stateLetter, terminalState, toCallStatus,
} from '../src/record-codec';

describe('parseClaimReply', () => {
  it('reads every reply of the claim script', () => {
    expect(parseClaimReply(1)).toEqual({ kind: 'run', attempt: 1, previousOwner: undefined });
    // A first attempt answered as a list: the claim found its caller's queued mark.
    expect(parseClaimReply(['run', 1, ''])).toEqual({ kind: 'run', attempt: 1, previousOwner: undefined, fromQueue: true });
    expect(parseClaimReply(['run', 2, ''])).toEqual({ kind: 'run', attempt: 2, previousOwner: undefined });
    expect(parseClaimReply(['run', 3, 'w1'])).toEqual({ kind: 'run', attempt: 3, previousOwner: 'w1' });
    expect(parseClaimReply(['stored', '{"x":1}', '', 'done'])).toEqual({ kind: 'stored', result: '{"x":1}', code: undefined, state: 'done' });
    expect(parseClaimReply(['stored', '', '-32005', 'failed'])).toEqual({ kind: 'stored', result: undefined, code: -32005, state: 'failed' });
    expect(parseClaimReply(['busy', 'w2', 812])).toEqual({ kind: 'busy', owner: 'w2', leaseLeftMs: 812 });
    expect(parseClaimReply(['cancelled'])).toEqual({ kind: 'cancelled' });
    expect(parseClaimReply(['dead', 3, 'w9'])).toEqual({ kind: 'dead', attempts: 3, lastOwner: 'w9' });
    expect(parseClaimReply(['expired', 'w9', 1])).toEqual({ kind: 'expired', lastOwner: 'w9', attempts: 1 });
    expect(parseClaimReply(['retry', 2, 500, 1_700_000_000_500, 'w9'])).toEqual({ kind: 'retry', attempt: 2, delayMs: 500, nextTryAt: 1_700_000_000_500, lastOwner: 'w9' });
  });

  it('never throws on what does not fit', () => {
    for (const raw of [null, 'run', [], ['run'], ['run', 0], ['run', 'x'], ['what', 1], 0, 1.5, ['retry', 1, 500, 9], ['retry', 2, 0, 9], ['retry', 2, 500]]) expect(parseClaimReply(raw).kind).toBe('invalid');
    expect(parseClaimReply(['stored', '', '', 'bogus'])).toMatchObject({ kind: 'stored', state: 'unknown' });
    expect(parseClaimReply(['busy', 'w', -5])).toMatchObject({ leaseLeftMs: 0 });
  });
});

describe('outcomes', () => {
  const ok = { jsonrpc: '2.0' as const, result: 1, id: 1 };
  const err = (code: number) => ({ jsonrpc: '2.0' as const, error: { code, message: 'm' }, id: 1 });

  it('classifies a response into the state it leaves', () => {
    expect(terminalState(ok)).toBe('done');
    expect(terminalState(err(ErrorCode.Cancelled))).toBe('cancelled');
    expect(terminalState(err(ErrorCode.DeadlineExceeded))).toBe('expired');
    expect(terminalState(err(ErrorCode.InternalError))).toBe('failed');
    expect(terminalState(err(ErrorCode.WorkerLost))).toBe('failed');
  });

  it('answers with the stored response when there is one', () => {
    expect(outcomeResponse('done', JSON.stringify(ok), undefined, 9)).toEqual(ok);
    expect(outcomeResponse('cancelled', JSON.stringify(err(ErrorCode.Cancelled)), undefined, 9)).toEqual(err(ErrorCode.Cancelled));
  });

  it('builds the Warren error for outcomes decided without a handler, with the request id', () => {
    expect(outcomeResponse('cancelled', undefined, undefined, 'a')).toMatchObject({ id: 'a', error: { code: ErrorCode.Cancelled } });
    expect(outcomeResponse('failed', undefined, ErrorCode.WorkerLost, 'a')).toMatchObject({ id: 'a', error: { code: ErrorCode.WorkerLost } });
    expect(outcomeResponse('failed', undefined, -32099, 'a')).toMatchObject({ error: { code: -32099 } });
    expect(outcomeResponse('expired', undefined, undefined, null)).toMatchObject({ id: null, error: { code: ErrorCode.DeadlineExceeded } });
    expect(outcomeResponse('running', undefined, undefined, 1)).toBeUndefined();
    expect(outcomeResponse('done', 'not json', undefined, 1)).toBeUndefined();
  });

  it('parses stored values defensively', () => {
    expect(parseStoredResponse('{"jsonrpc":"2.0"}')).toBeUndefined();
    expect(parseStoredResponse('[1]')).toBeUndefined();
    expect(parseStoredId('"x"')).toBe('x');
    expect(parseStoredId('12')).toBe(12);
    expect(parseStoredId('{')).toBeNull();
    expect(parseStoredId(undefined)).toBeNull();
  });
});

describe('toCallStatus', () => {
  const now = 5_000_000;
  const running = { state: 'running', meta: encodeMeta({ service: 's', method: 'm', deadline: now + 1000, rid: '7' }), worker: 'w', attempt: '2', startedAt: String(now - 100), lease: String(now + 500), token: 't' };

  it('is unknown without a record', () => {
    expect(toCallStatus('c', {}, now)).toEqual({ callId: 'c', state: 'unknown', cancelRequested: false });
  });

  it('reads a running call', () => {
    expect(toCallStatus('c', running, now)).toEqual({
      callId: 'c', state: 'running', service: 's', method: 'm', worker: 'w', attempt: 2, startedAt: now - 100, deadline: now + 1000, leaseUntil: now + 500, cancelRequested: false,
    });
  });

  it('calls a running call past its deadline expired', () => {
    expect(toCallStatus('c', running, now + 2000)).toMatchObject({ state: 'expired', response: { id: 7, error: { code: ErrorCode.DeadlineExceeded } } });
    expect(toCallStatus('c', running, now + 2000).leaseUntil).toBeUndefined();
  });

  it('reads stored progress as a fresh report is made: fraction clamped, message cut; none for a call waiting to retry', () => {
    const progress = JSON.stringify({ fraction: 7, message: 'x'.repeat(500), at: now });
    const status = toCallStatus('c', { ...running, progress }, now);
    expect(status.progress).toEqual({ fraction: 1, message: 'x'.repeat(200), at: now });
    expect(toCallStatus('c', { ...running, progress: '{"fraction":"1"}' }, now).progress).toBeUndefined();
    const waiting = toCallStatus('c', { ...running, state: 'retrying', lease: String(now + 800), progress }, now);
    expect(waiting).toMatchObject({ state: 'retrying', attempt: 2, nextTryAt: now + 800 });
    expect(waiting.progress).toBeUndefined();
    expect(waiting.leaseUntil).toBeUndefined();
  });

  it('reads a cancel mark and a finished call', () => {
    expect(toCallStatus('c', { state: 'cancelled', cancel: '1' }, now)).toMatchObject({ state: 'cancelled', cancelRequested: true, response: { id: null, error: { code: ErrorCode.Cancelled } } });
    const result = JSON.stringify({ jsonrpc: '2.0', result: 'ok', id: 7 });
    expect(toCallStatus('c', { ...running, state: 'done', result, finishedAt: String(now) }, now)).toMatchObject({ state: 'done', finishedAt: now, response: { result: 'ok' } });
  });
});

describe('meta', () => {
  it('round-trips, whatever the id holds', () => {
    const meta = { service: 'svc', method: 'a.b/c', deadline: 1_700_000_000_000, rid: JSON.stringify('tab\there') };
    expect(decodeMeta(encodeMeta(meta))).toEqual(meta);
    expect(decodeMeta('broken')).toEqual({});
    expect(decodeMeta(undefined)).toEqual({});
  });
});

describe('record codec', () => {
  const S = recordSeparator;
  it('reads every field of a packed record by position, the state as a word, empty ones left out', () => {
    const meta = encodeMeta({ service: 'svc', method: 'add', deadline: 1_700_000_000_000, rid: '7' });
    const live = ['R', '100', '200', 'w1', 'w1.1', '1', '', meta, '', '', ''].join(S);
    expect(parseRecord(live)).toEqual({ state: 'running', startedAt: '100', lease: '200', worker: 'w1', token: 'w1.1', attempt: '1', meta });
    const result = JSON.stringify({ jsonrpc: '2.0', result: `a${S}b`, id: 7 });
    expect(result).not.toContain(S);
    const done = ['D', '100', '', 'w1', 'w1.1', '2', '1', meta, '', '300', result].join(S);
    expect(parseRecord(done)).toEqual({ state: 'done', startedAt: '100', worker: 'w1', token: 'w1.1', attempt: '2', cancel: '1', meta, finishedAt: '300', result });
  });

  it('reads what the claim script writes from the packed owner', () => {
    const owner = encodeOwner('w1', 'w1.a', 3, 'svc\tadd\t5\t"x"');
    expect(parseRecord(['R', '1', '2', owner, '', '', ''].join(S))).toMatchObject({ worker: 'w1', token: 'w1.a', attempt: '3', meta: 'svc\tadd\t5\t"x"' });
  });

  it('never throws on what does not fit, and stores states as one letter', () => {
    expect(parseRecord(null)).toEqual({});
    expect(parseRecord('')).toEqual({});
    expect(parseRecord('X')).toEqual({ state: 'X' });
    expect(parseRecord(`R${S}1`)).toEqual({ state: 'running', startedAt: '1' });
    expect(['done', 'failed', 'cancelled', 'expired'].map((s) => stateLetter(s as 'done'))).toEqual(['D', 'F', 'C', 'E']);
  });

  it('keeps separators out of meta: a method name is whatever a caller sent', () => {
    const meta = encodeMeta({ service: 'svc', method: `a${S}b\tc`, deadline: 5, rid: '1' });
    expect(meta).not.toContain(S);
    expect(decodeMeta(meta)).toEqual({ service: 'svc', method: 'a\ufffdb\ufffdc', deadline: 5, rid: '1' });
  });
});

describe('parseWorkersReply', () => {
  it('reads live entries and skips broken ones', () => {
    const entry = JSON.stringify({ service: 's', instanceId: 'i', inflight: 2, calls: ['a', 'b', 3], startedAt: 10, heartbeatMs: 100 });
    const parsed = parseWorkersReply([1000, 's/i', entry, 1300, 's/x', '{broken', 1300, 's/y']);
    expect(parsed.now).toBe(1000);
    expect(parsed.workers).toEqual([{ service: 's', instanceId: 'i', inflight: 2, calls: ['a', 'b'], startedAt: 10, heartbeatMs: 100, expiresAt: 1300 }]);
    expect(parseWorkersReply(null).workers).toEqual([]);
  });
});
