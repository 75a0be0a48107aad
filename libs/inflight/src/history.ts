import { ErrorCode, isErrorResponse, type ErrorObject } from '@warren/jsonrpc';
import { encodeMeta, parseRecord, recordFields, recordSeparator, stateLetter, toCallStatus, type CallStatus } from './record-codec';
import { maxErrorBytes } from './history-script';
import type { HistoryKind } from './keys';
import { compareIds } from './stream-ids';
import type { HistoryEntry, ViewStore } from './store-port';

/** How finished calls are asked for (history.list); every filter is optional and they all apply. */
export interface HistoryQuery {
  /** One call only (what InflightView.call looks for). */
  readonly callId?: string;
  readonly method?: string;
  readonly service?: string;
  readonly worker?: string;
  /** The JSON-RPC error code; a code asks for failures only. */
  readonly code?: number;
  /** `done`, or one of the failure states (`failed`, `cancelled`, `expired`), or `failures` for all three. */
  readonly state?: 'done' | 'failed' | 'cancelled' | 'expired' | 'failures';
  /** Finished at or after (ms since the epoch). @default no bound */
  readonly since?: number;
  /** Finished at or before (ms since the epoch). @default no bound */
  readonly until?: number;
  /** The page after this one: the `next` of the page before. */
  readonly before?: string;
  /** Entries per page, 1 to {@link maxHistoryPage}. @default 100 */
  readonly limit?: number;
}

/** One finished call of the history. */
export type HistoryItem = CallStatus & {
  /** Its place in the history (a Redis stream id), what `before` pages from. */
  readonly id: string;
  /** From the start of its last attempt to its end, when both are known. */
  readonly durationMs?: number;
  /** The JSON-RPC error code of a call that did not end `done`. */
  readonly code?: number;
  /** The error answered (a failure whose error was at most 8 KiB; else only `code`). */
  readonly error?: ErrorObject;
};

export interface HistoryPage {
  /** Newest first. */
  readonly items: HistoryItem[];
  /** Pass as `before` for the next (older) page; absent at the end. */
  readonly next?: string;
}

export const maxHistoryPage = 500;
/** Entries read per stream and query at most, so a filter matching nothing cannot read the whole history at once (`next` goes on from there). */
const maxScanned = 20_000;
const chunk = 500;

/** A call that ended outside a tracked worker's finish, as its relayer saw it (InflightView.recordOutcome). */
export interface RelayedOutcome {
  readonly callId: string;
  readonly service: string;
  readonly method: string;
  /** When it was sent, and answered (ms since the epoch). */
  readonly startedAt: number;
  readonly finishedAt: number;
  /** The JSON-RPC id, as JSON. */
  readonly rid: string;
  /** The error it was answered with; none: a result. */
  readonly error?: ErrorObject;
}

/** Its history record, in the record format of record-codec.ts (no worker, no attempt: nobody tracked it). */
export function relayedRecord(o: RelayedOutcome): { kind: HistoryKind; record: string } {
  const state = o.error === undefined ? 'done' : o.error.code === ErrorCode.Cancelled ? 'cancelled' : o.error.code === ErrorCode.DeadlineExceeded ? 'expired' : 'failed';
  const error = o.error === undefined ? '' : JSON.stringify({ jsonrpc: '2.0', error: o.error, id: null });
  const given: Partial<Record<(typeof recordFields)[number], string>> = {
    state: stateLetter(state), startedAt: String(Math.floor(o.startedAt)), meta: encodeMeta({ service: o.service, method: o.method, deadline: 0, rid: o.rid }),
    code: o.error === undefined ? '' : String(o.error.code), finishedAt: String(Math.floor(o.finishedAt)), result: error.length <= maxErrorBytes ? error : '',
  };
  return { kind: state === 'done' ? 'done' : 'failed', record: recordFields.map((name) => given[name] ?? '').join(recordSeparator) };
}

const failureStates: ReadonlySet<string> = new Set(['failed', 'cancelled', 'expired']);

/** A query's page of the history, both streams merged newest first. Bad filters are the caller's to check (methods.ts). */
export async function readHistory(store: Pick<ViewStore, 'historyRange'>, q: HistoryQuery, now: number): Promise<HistoryPage> {
  const limit = q.limit ?? 100;
  const kinds: HistoryKind[] = q.state === 'done' ? (q.code === undefined ? ['done'] : []) : q.state !== undefined || q.code !== undefined ? ['failed'] : ['done', 'failed'];
  const upTo = q.until === undefined ? undefined : `${Math.floor(q.until) + 1}-0`;
  const start = q.before !== undefined && (upTo === undefined || compareIds(q.before, upTo) < 0) ? q.before : upTo;
  const scans = await Promise.all(kinds.map((kind) => scan(store, kind, start, q, limit, now)));
  const items = scans.flatMap((s) => s.items).sort((a, b) => compareIds(b.id, a.id)).slice(0, limit);
  if (items.length === limit) return { items, next: (items[items.length - 1] as HistoryItem).id };
  // Short of a page because a scan stopped at its bound: go on from the newest place a scan stopped.
  const stopped = scans.map((s) => s.stoppedAt).filter((id): id is string => id !== undefined).sort(compareIds).pop();
  return stopped === undefined ? { items } : { items, next: stopped };
}

/** Up to `limit` matching entries of one stream, newest first; `stoppedAt` when it stopped at {@link maxScanned} with more to read. */
async function scan(store: Pick<ViewStore, 'historyRange'>, kind: HistoryKind, start: string | undefined, q: HistoryQuery, limit: number, now: number): Promise<{ items: HistoryItem[]; stoppedAt?: string }> {
  const items: HistoryItem[] = [];
  let before = start;
  for (let read = 0; read < maxScanned;) {
    const entries = await store.historyRange(kind, before, q.since ?? 0, chunk);
    for (const entry of entries) {
      const item = toItem(entry, now, q.callId !== undefined);
      if (matches(item, q)) items.push(item);
      if (items.length === limit || (q.callId !== undefined && items.length > 0)) return { items };
    }
    if (entries.length < chunk) return { items };
    read += entries.length;
    before = (entries[entries.length - 1] as HistoryEntry)[0];
  }
  return before === undefined ? { items } : { items, stoppedAt: before };
}

/** `withParams`: one call's item keeps its params; a page of many leaves them out (each up to 4 KiB). */
function toItem([id, callId, record]: HistoryEntry, now: number, withParams: boolean): HistoryItem {
  const fields = parseRecord(record);
  const status = toCallStatus(callId, fields, now);
  const error = status.response && isErrorResponse(status.response) ? status.response.error : undefined;
  const code = fields['code'] === undefined ? error?.code : Number(fields['code']);
  const { response: _response, params, ...rest } = status;
  return {
    ...rest,
    ...(withParams && params !== undefined ? { params } : {}),
    id,
    ...(status.startedAt !== undefined && status.finishedAt !== undefined ? { durationMs: Math.max(0, status.finishedAt - status.startedAt) } : {}),
    ...(code === undefined || !Number.isSafeInteger(code) ? {} : { code }),
    ...(error === undefined ? {} : { error }),
  };
}

function matches(item: HistoryItem, q: HistoryQuery): boolean {
  if (q.callId !== undefined && item.callId !== q.callId) return false;
  if (q.method !== undefined && item.method !== q.method) return false;
  if (q.service !== undefined && item.service !== q.service) return false;
  if (q.worker !== undefined && item.worker !== q.worker) return false;
  if (q.code !== undefined && item.code !== q.code) return false;
  if (q.state !== undefined && q.state !== 'failures' && item.state !== q.state) return false;
  if (q.state === 'failures' && !failureStates.has(item.state)) return false;
  return true;
}
