// What call detail tells of a call's params, trace id and progress history, checked the same way over
// either store (call-detail.test.ts: memory; call-detail.int.test.ts: Redis).
import { ErrorCode } from '@warren/jsonrpc';
import { encodeParams, maxParamsChars } from '../src/call-params';
import { encodeMeta } from '../src/record-codec';
import { progressLogEntries } from '../src/keys';
import type { ClaimArgs, TrackerStore } from '../src/store-port';
import type { InflightView } from '../src/view';

export const traceId = '0af7651916cd43dd8448eb211c80319c';

export function claimArgs(token: string, params: unknown, withTrace = true): ClaimArgs {
  const stored = encodeParams(params);
  const meta = encodeMeta({ service: 'svc', method: 'work', deadline: Date.now() + 600_000, rid: '7', ...(withTrace ? { traceId } : {}), ...(stored === undefined ? {} : { params: stored }) });
  return { token, worker: 'w1', meta, attempt: 1, leaseMs: 5000, runningTtlMs: 20_000, maxAttempts: 3, finishedTtlMs: 30_000, workerLostCode: ErrorCode.WorkerLost, takeover: false };
}

/** Claims a call with params and a trace id, reports progress past the log's bound, finishes it; checks detail at each step. */
export async function checkParamsTraceAndProgress(store: TrackerStore, view: InflightView, callId: string, token: string): Promise<void> {
  const params = { text: 'a\ttab and \u001f a separator', n: [1, 2, 3] };
  expect(await store.claim(callId, claimArgs(token, params))).toMatchObject({ kind: 'run', attempt: 1 });
  const reports = progressLogEntries + 10;
  for (let i = 1; i <= reports; i++) expect(await store.progress(callId, token, JSON.stringify({ fraction: i / reports, message: `step ${i}`, at: 1000 + i }), 60_000)).toBe(1);
  // Not the owner any more: neither the latest nor the log changes.
  expect(await store.progress(callId, 'other-token', JSON.stringify({ fraction: 0, at: 1 }), 60_000)).toBe(0);
  const running = await view.call(callId);
  expect(running).toMatchObject({ state: 'running', traceId, params: { truncated: false } });
  expect(JSON.parse(running.params?.text ?? '')).toEqual(params);
  expect(running.progressLog).toHaveLength(progressLogEntries);
  expect(running.progressLog[0]).toEqual({ fraction: 11 / reports, message: 'step 11', at: 1011 });
  expect(running.progressLog.at(-1)).toEqual({ fraction: 1, message: `step ${reports}`, at: 1000 + reports });
  expect(running.progress).toEqual(running.progressLog.at(-1));
  expect(await store.finish(callId, { state: 'failed', result: JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: 'boom' }, id: 7 }), ttlMs: 30_000, code: '-32000' })).toBe(1);
  const finished = await view.call(callId);
  expect(finished).toMatchObject({ state: 'failed', traceId, history: { traceId, params: { text: running.params?.text } } });
  expect(finished.progressLog).toHaveLength(progressLogEntries);
  // A page of outcomes leaves params out; one call's lookup keeps them.
  const page = await view.history({ method: 'work' });
  const item = page.items.find((c) => c.callId === callId);
  expect(item).toMatchObject({ traceId });
  expect(item).not.toHaveProperty('params');
}

/** Params past the bound are kept cut, with a marker saying how long they were; a call without them has none. */
export async function checkTruncatedParams(store: TrackerStore, view: InflightView, callId: string, bareId: string): Promise<void> {
  const big = { blob: 'x'.repeat(maxParamsChars * 2) };
  await store.claim(callId, claimArgs(`${callId}-t`, big));
  const detail = await view.call(callId);
  expect(detail.params).toEqual({ text: JSON.stringify(big).slice(0, maxParamsChars), truncated: true, chars: JSON.stringify(big).length });
  await store.claim(bareId, claimArgs(`${bareId}-t`, undefined, false));
  const bare = await view.call(bareId);
  expect(bare).toMatchObject({ state: 'running', progressLog: [] });
  expect(bare).not.toHaveProperty('params');
  expect(bare).not.toHaveProperty('traceId');
}
