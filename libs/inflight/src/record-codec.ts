import { decodeProgress, type Progress } from '@warren/calls';
import { decodeParams, type CallParams } from './call-params';
import {
  assertNever, CancelledError, DeadlineExceededError, ErrorCode, JsonRpcError, WorkerLostError, failureResponse, isErrorResponse, parseIdText,
  type Id, type ResponseMessage,
} from '@warren/jsonrpc';

/**
 * Pure functions between Redis replies and Warren terms: what a claim script
 * answered, what state a record is in, what response a stored outcome stands
 * for. No I/O here, so the rules are unit-tested without Redis. Parsing never
 * throws: a reply that does not fit comes back as `{ kind: 'invalid' }`.
 */

/** What the claim script decided for a delivered request. */
export type ClaimReply =
  /**
   * This worker owns the call now (first claim, or a takeover from `previousOwner`). `fromQueue`: its
   * first claim found the record its caller marked queued (trackQueued), so the call leaves the queued list.
   */
  | { readonly kind: 'run'; readonly attempt: number; readonly previousOwner: string | undefined; readonly fromQueue?: true }
  /**
   * The call has an outcome already: answer with it. `result` is the stored response JSON, if any; `rid` the
   * JSON-RPC id (as JSON) of the request the record was made for.
   */
  | { readonly kind: 'stored'; readonly result: string | undefined; readonly code: number | undefined; readonly state: CallState; readonly rid: string | undefined }
  /** Another worker holds a live lease: wait for its result. */
  | { readonly kind: 'busy'; readonly owner: string; readonly leaseLeftMs: number }
  /** The call was cancelled before it started: answer Cancelled, do not run it. */
  | { readonly kind: 'cancelled' }
  /** Every allowed attempt's worker died: answer WorkerLost and dead-letter it. */
  | { readonly kind: 'dead'; readonly attempts: number; readonly lastOwner: string | undefined }
  /**
   * Its owner's lease ran out (the worker died, or stalled past its lease) and the call is past its crowd
   * takeover (takeover.ts): a suspect, taken over only by a claim made in isolation. Nothing was changed.
   * `attempts`: runs charged so far.
   */
  | { readonly kind: 'expired'; readonly lastOwner: string | undefined; readonly attempts: number }
  /**
   * Its owner's lease ran out and its method has a retry policy: the record says `retrying` until
   * `nextTryAt` (Redis clock); publish the request to the delay queue for `delayMs` as `attempt`.
   */
  | { readonly kind: 'retry'; readonly attempt: number; readonly delayMs: number; readonly nextTryAt: number; readonly lastOwner: string | undefined }
  | { readonly kind: 'invalid'; readonly raw: unknown };

/** The states a record in Redis can be in (`unknown` means there is no record). */
const recordStates = new Set<string>(['running', 'queued', 'retrying', 'done', 'failed', 'cancelled', 'expired']);

const text = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : typeof v === 'number' ? String(v) : undefined);
const int = (v: unknown): number | undefined => {
  const n = typeof v === 'number' ? v : typeof v === 'string' && v !== '' ? Number(v) : Number.NaN;
  return Number.isSafeInteger(n) ? n : undefined;
};

export function parseClaimReply(raw: unknown): ClaimReply {
  // A bare number: claimed fresh, at that attempt (the common case, kept small).
  if (typeof raw === 'number') return Number.isSafeInteger(raw) && raw >= 1 ? { kind: 'run', attempt: raw, previousOwner: undefined } : { kind: 'invalid', raw };
  if (!Array.isArray(raw)) return { kind: 'invalid', raw };
  const [kind, a, b, c, d] = raw as unknown[];
  switch (kind) {
    case 'run': {
      const attempt = int(a);
      if (attempt === undefined || attempt < 1) return { kind: 'invalid', raw };
      const previousOwner = text(b);
      // A first attempt is answered as a bare number unless a record was there: the caller's queued mark
      // (a retry's or a given-back call's next attempt is 2 or more).
      return attempt === 1 && previousOwner === undefined ? { kind: 'run', attempt, previousOwner, fromQueue: true } : { kind: 'run', attempt, previousOwner };
    }
    case 'stored':
      return { kind: 'stored', result: text(a), code: int(b), state: typeof c === 'string' && recordStates.has(c) ? (c as CallState) : 'unknown', rid: typeof d === 'string' ? decodeMeta(d).rid : undefined };
    case 'busy':
      return { kind: 'busy', owner: text(a) ?? '', leaseLeftMs: Math.max(0, int(b) ?? 0) };
    case 'cancelled':
      return { kind: 'cancelled' };
    case 'dead':
      return { kind: 'dead', attempts: int(a) ?? 0, lastOwner: text(b) };
    case 'expired':
      return { kind: 'expired', lastOwner: text(a), attempts: int(b) ?? 0 };
    case 'retry': {
      const attempt = int(a);
      const delayMs = int(b);
      const nextTryAt = int(c);
      if (attempt === undefined || attempt < 2 || delayMs === undefined || delayMs < 1 || nextTryAt === undefined) return { kind: 'invalid', raw };
      return { kind: 'retry', attempt, delayMs, nextTryAt, lastOwner: text(d) };
    }
    default:
      return { kind: 'invalid', raw };
  }
}

/** What does not change over a call's life, stored in one field (`meta`) of its record. */
export interface CallMeta {
  readonly service: string;
  readonly method: string;
  readonly deadline: number;
  /** The JSON-RPC id, as JSON. */
  readonly rid: string;
  /** The trace id of the request's `traceparent` header (32 hex digits), if it had one. */
  readonly traceId?: string;
  /** Its params, stored form (call-params.ts: bounded). */
  readonly params?: string;
}

/**
 * Tab-separated: service and method names cannot hold control characters
 * (AMQP resource names, routing keys), a number cannot, and JSON escapes
 * them. The trace id and params come after the id only when there is either
 * (a record written without them reads the same); params go last.
 */
export function encodeMeta(meta: CallMeta): string {
  const base = `${clean(meta.service)}\t${clean(meta.method)}\t${meta.deadline}\t${meta.rid}`;
  if (meta.traceId === undefined && meta.params === undefined) return base;
  return `${base}\t${meta.traceId === undefined ? '' : clean(meta.traceId)}\t${meta.params ?? ''}`;
}

// A method name is whatever a caller sent; one holding a tab or the record separator would shift the fields after it.
const clean = (name: string): string => (name.includes('\t') || name.includes(recordSeparator) ? name.replaceAll('\t', '\ufffd').replaceAll(recordSeparator, '\ufffd') : name);

/** Joins the fields of a call record in Redis (see scripts.ts); JSON text escapes it, and meta is cleaned of it. */
export const recordSeparator = '\u001f';

/** The fields of a call record, in order; the scripts address them by position. */
export const recordFields = ['state', 'startedAt', 'lease', 'worker', 'token', 'attempt', 'cancel', 'meta', 'code', 'finishedAt', 'result'] as const;

const stateByLetter: Readonly<Record<string, CallState>> = { R: 'running', Q: 'queued', W: 'retrying', D: 'done', F: 'failed', C: 'cancelled', E: 'expired' };
const letterByState: Readonly<Record<string, string>> = Object.fromEntries(Object.entries(stateByLetter).map(([letter, state]) => [state, letter]));

/** The one-letter form a record stores a state in. */
export function stateLetter(state: 'done' | 'failed' | 'cancelled' | 'expired'): string {
  return letterByState[state] ?? 'F';
}

/** The packed owner fields (worker to meta) a claim sends, see the claim script. */
export function encodeOwner(worker: string, token: string, attempt: number, meta: string): string {
  return `${worker}${recordSeparator}${token}${recordSeparator}${attempt}${recordSeparator}${recordSeparator}${meta}`;
}

/**
 * The record of a call its caller has sent and no worker has taken yet:
 * queued, attempt 0, no owner, sent at `sentAt`. The claim script takes it like a call given
 * back (attempt 0 + 1 = 1, no previous owner); a cancel marks it like any
 * queued call.
 */
export function queuedRecord(meta: string, sentAt: number): string {
  // `startedAt` says when it was sent until a worker's claim replaces it: the view shows how long it waits.
  const fields: Partial<Record<(typeof recordFields)[number], string>> = { state: 'Q', startedAt: String(Math.floor(sentAt)), attempt: '0', meta };
  return recordFields.map((name) => fields[name] ?? '').join(recordSeparator);
}

/**
 * A stored record (GET) as named fields, empty ones left out, the state as a
 * word: the shape {@link toCallStatus} reads. No record: `{}`.
 */
export function parseRecord(raw: string | null | undefined): Record<string, string> {
  if (typeof raw !== 'string' || raw === '') return {};
  const out: Record<string, string> = {};
  let pos = 0;
  for (let i = 0; i < recordFields.length; i++) {
    const last = i === recordFields.length - 1;
    const end = last ? -1 : raw.indexOf(recordSeparator, pos);
    const value = end < 0 ? raw.slice(pos) : raw.slice(pos, end);
    const name = recordFields[i] as string;
    if (value !== '') out[name] = i === 0 ? (stateByLetter[value] ?? value) : value;
    if (end < 0) break;
    pos = end + 1;
  }
  return out;
}

export function decodeMeta(raw: string | undefined): Partial<CallMeta> {
  if (raw === undefined) return {};
  const first = raw.indexOf('\t');
  const second = raw.indexOf('\t', first + 1);
  const third = raw.indexOf('\t', second + 1);
  if (first < 0 || second < 0 || third < 0) return {};
  const deadline = Number(raw.slice(second + 1, third));
  const fourth = raw.indexOf('\t', third + 1);
  const fifth = fourth < 0 ? -1 : raw.indexOf('\t', fourth + 1);
  const traceId = fifth < 0 ? '' : raw.slice(fourth + 1, fifth);
  const params = fifth < 0 ? '' : raw.slice(fifth + 1);
  return {
    service: raw.slice(0, first),
    method: raw.slice(first + 1, second),
    ...(Number.isSafeInteger(deadline) ? { deadline } : {}),
    rid: fourth < 0 ? raw.slice(third + 1) : raw.slice(third + 1, fourth),
    ...(traceId === '' ? {} : { traceId }),
    ...(params === '' ? {} : { params }),
  };
}

/** Every state a call can be seen in. */
export type CallState =
  /** No record: never sent, forgotten (TTL), or sent by a caller that does not mark its calls queued and not taken by any worker yet. */
  | 'unknown'
  /** Sent and not taken by any worker yet (its caller marks calls queued: `trackQueued`), or given back unfinished (its worker shut down and requeued it). */
  | 'queued'
  /**
   * Its last attempt failed with a retryable error, or its worker was lost, under its method's retry policy; it
   * waits in a delay queue for its next attempt (`nextTryAt`).
   */
  | 'retrying'
  | 'running'
  | 'done'
  | 'failed'
  | 'cancelled'
  /** Its deadline passed before it finished (or it finished with DeadlineExceeded). */
  | 'expired';

/** The terminal state a response stands for, as stored by `finish`. */
export function terminalState(response: ResponseMessage): 'done' | 'failed' | 'cancelled' | 'expired' {
  if (!isErrorResponse(response)) return 'done';
  if (response.error.code === ErrorCode.Cancelled) return 'cancelled';
  if (response.error.code === ErrorCode.DeadlineExceeded) return 'expired';
  return 'failed';
}

/** Parses a stored response; undefined when it is not one. */
export function parseStoredResponse(json: string | undefined): ResponseMessage | undefined {
  if (json === undefined) return undefined;
  try {
    const value: unknown = JSON.parse(json);
    if (typeof value !== 'object' || value === null || (value as { jsonrpc?: unknown }).jsonrpc !== '2.0') return undefined;
    if (!('result' in value) && !('error' in value)) return undefined;
    return value as ResponseMessage;
  } catch {
    return undefined;
  }
}

/** The id as stored (`rid`, JSON); null when absent or unreadable. */
export function parseStoredId(json: string | undefined): Id {
  // Exact for ids beyond 2^53 or written as 1.0 (stored with idText).
  return parseIdText(json);
}

/**
 * The response that stands for a finished record: its stored response, or,
 * when the outcome was decided without running a handler (cancelled before it
 * started, attempts exhausted, expired), the matching Warren error.
 */
export function outcomeResponse(state: CallState, stored: string | undefined, code: number | undefined, id: Id): ResponseMessage | undefined {
  const response = parseStoredResponse(stored);
  if (response) return response;
  switch (state) {
    case 'cancelled':
      return failureResponse(id, new CancelledError().toErrorObject());
    case 'expired':
      return failureResponse(id, new DeadlineExceededError().toErrorObject());
    case 'failed':
      return failureResponse(id, (code === ErrorCode.WorkerLost || code === undefined ? new WorkerLostError() : new JsonRpcError(code)).toErrorObject());
    case 'done':
    case 'unknown':
    case 'queued':
    case 'retrying':
    case 'running':
      return undefined;
    default:
      return assertNever(state);
  }
}

/** A call's record as the view shows it. */
export interface CallStatus {
  readonly callId: string;
  readonly state: CallState;
  readonly service?: string;
  readonly method?: string;
  /** The instance running it (running), or the last one that did. */
  readonly worker?: string;
  readonly attempt?: number;
  /** When its current attempt started, ms since the epoch (Redis clock). */
  readonly startedAt?: number;
  readonly deadline?: number;
  /** When the running worker's lease runs out unless renewed (Redis clock). */
  readonly leaseUntil?: number;
  /** When a `retrying` call's next attempt is due, ms since the epoch (the worker's clock). */
  readonly nextTryAt?: number;
  readonly finishedAt?: number;
  /** A cancel was asked for. */
  readonly cancelRequested: boolean;
  /** The outcome, for finished calls. */
  readonly response?: ResponseMessage;
  /** The latest progress its handler reported (`ctx.progress`), if any. */
  readonly progress?: CallProgress;
  /** The trace id of its request's `traceparent` header, when a tracked worker claimed it. */
  readonly traceId?: string;
  /** Its params (bounded, call-params.ts), when a tracked worker claimed it. */
  readonly params?: CallParams;
}

/** A call's latest progress as stored: `fraction` 0..1, `at` ms since the epoch (the worker's clock). */
export type CallProgress = Progress;

/** Reads a record ({@link parseRecord}) into a status; `now` decides whether a running call is past its deadline. */
export function toCallStatus(callId: string, record: Readonly<Record<string, string>>, now: number): CallStatus {
  const raw = record['state'];
  if (raw === undefined || !recordStates.has(raw)) return { callId, state: 'unknown', cancelRequested: false };
  const meta = decodeMeta(record['meta']);
  let state = raw as CallState;
  if ((state === 'running' || state === 'queued' || state === 'retrying') && meta.deadline !== undefined && meta.deadline < now) state = 'expired';
  const response = outcomeResponse(state, record['result'], int(record['code']), parseStoredId(meta.rid));
  const optional = {
    service: text(meta.service),
    method: text(meta.method),
    worker: text(record['worker']),
    attempt: int(record['attempt']),
    startedAt: int(record['startedAt']),
    deadline: meta.deadline,
    leaseUntil: state === 'running' ? int(record['lease']) : undefined,
    nextTryAt: state === 'retrying' ? int(record['lease']) : undefined,
    finishedAt: int(record['finishedAt']),
    response,
    // A retrying call runs no attempt: what a lost worker's attempt reported last is no progress of its next.
    progress: state === 'retrying' || record['progress'] === undefined ? undefined : decodeProgress(record['progress']),
    traceId: meta.traceId,
    params: decodeParams(meta.params),
  };
  const status: Record<string, unknown> = { callId, state, cancelRequested: record['cancel'] === '1' };
  for (const [k, v] of Object.entries(optional)) if (v !== undefined) status[k] = v;
  return status as unknown as CallStatus;
}

/** A live worker instance, from its heartbeat. */
export interface WorkerInfo {
  readonly service: string;
  readonly instanceId: string;
  /** Calls it runs now. */
  readonly inflight: number;
  /** Ids of the calls it runs (at most {@link maxListedCalls}). */
  readonly calls: readonly string[];
  readonly startedAt: number;
  /** Its entry expires then unless it beats again (Redis clock). */
  readonly expiresAt: number;
  readonly heartbeatMs: number;
}

/** The most call ids one heartbeat lists; the count is always exact. */
export const maxListedCalls = 1000;

/** A heartbeat entry as stored (JSON). */
export interface HeartbeatEntry {
  readonly service: string;
  readonly instanceId: string;
  readonly inflight: number;
  readonly calls: readonly string[];
  readonly startedAt: number;
  readonly heartbeatMs: number;
}

/** Parses the workers script's reply ({now, field, entry, expires, ...}); skips entries that do not parse. */
export function parseWorkersReply(raw: unknown): { readonly now: number; readonly workers: WorkerInfo[] } {
  const items = Array.isArray(raw) ? (raw as unknown[]) : [];
  const now = int(items[0]) ?? Date.now();
  const workers: WorkerInfo[] = [];
  for (let i = 1; i + 2 < items.length; i += 3) {
    const entry = parseHeartbeat(items[i + 1]);
    const expiresAt = int(items[i + 2]);
    if (entry && expiresAt !== undefined) workers.push({ ...entry, expiresAt });
  }
  return { now, workers };
}

/** Parses the liveMarks script's reply ({callId, msLeft, ...}) into pairs; skips entries that do not parse. */
export function parseLiveMarks(raw: unknown): [callId: string, msLeft: number][] {
  const items = Array.isArray(raw) ? (raw as unknown[]) : [];
  const marks: [string, number][] = [];
  for (let i = 0; i + 1 < items.length; i += 2) {
    const callId = items[i];
    const msLeft = int(items[i + 1]);
    if (typeof callId === 'string' && msLeft !== undefined) marks.push([callId, msLeft]);
  }
  return marks;
}

function parseHeartbeat(raw: unknown): HeartbeatEntry | undefined {
  if (typeof raw !== 'string') return undefined;
  try {
    const v = JSON.parse(raw) as Partial<HeartbeatEntry>;
    if (typeof v.service !== 'string' || typeof v.instanceId !== 'string') return undefined;
    return {
      service: v.service,
      instanceId: v.instanceId,
      inflight: typeof v.inflight === 'number' ? v.inflight : 0,
      calls: Array.isArray(v.calls) ? v.calls.filter((c): c is string => typeof c === 'string') : [],
      startedAt: typeof v.startedAt === 'number' ? v.startedAt : 0,
      heartbeatMs: typeof v.heartbeatMs === 'number' ? v.heartbeatMs : 0,
    };
  } catch {
    return undefined;
  }
}

