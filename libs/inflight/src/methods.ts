import {
  InvalidParamsError, ServiceUnavailableError, type JsonSchema, type JsonValue, type MethodDefinition, type NotificationDefinition,
} from '@warren/jsonrpc';
import { InflightError } from './errors';
import { maxHistoryPage, type HistoryQuery } from './history';
import type { CancelOutcome, InflightView } from './view';

const callIdSchema: JsonSchema = { type: 'object', properties: { callId: { type: 'string', minLength: 1 } }, required: ['callId'] };
const serviceSchema: JsonSchema = { type: 'object', properties: { service: { type: 'string' } } };

const historySchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    method: { type: 'string', minLength: 1 },
    service: { type: 'string', minLength: 1 },
    worker: { type: 'string', minLength: 1 },
    code: { type: 'integer' },
    state: { enum: ['done', 'failed', 'cancelled', 'expired', 'failures'] },
    since: { type: 'integer', minimum: 0 },
    until: { type: 'integer', minimum: 0 },
    before: { type: 'string', pattern: '^[0-9]{1,15}-[0-9]{1,15}$' },
    limit: { type: 'integer', minimum: 1, maximum: maxHistoryPage },
  },
};

/** Store failures become -32002 (retryable); nothing else of the local error goes on the wire. */
async function wire<T>(work: () => Promise<T>): Promise<JsonValue> {
  try {
    return JSON.parse(JSON.stringify(await work())) as JsonValue;
  } catch (err) {
    if (err instanceof InflightError) throw new ServiceUnavailableError(undefined, { reason: err.code });
    throw err;
  }
}

function callIdOf(params: unknown): string {
  const id = (params as { callId?: unknown; id?: unknown } | undefined)?.callId ?? (params as { id?: unknown } | undefined)?.id;
  if (typeof id !== 'string' || id === '') throw new InvalidParamsError(undefined, { reason: 'callId must be a non-empty string' });
  return id;
}

/** history.list's params (checked against its schema by the service) as a query; `since` after `until` is refused. */
function historyQuery(params: unknown): HistoryQuery {
  const q = (params ?? {}) as HistoryQuery;
  if (q.since !== undefined && q.until !== undefined && q.since > q.until) throw new InvalidParamsError(undefined, { reason: 'since must not be after until' });
  return q;
}

/**
 * The in-flight view as JSON-RPC methods, for a Warren service (or the
 * broker) to expose to operators and callers (plain method definitions: they
 * fit `startService`'s `methods` without this package knowing the runtime):
 *
 * - `inflight.list {service?}` → calls running now
 * - `inflight.status {callId}` → state and stored outcome
 * - `inflight.cancel {callId}` → what the cancel did
 * - `inflight.workers {service?}` → live workers and their load
 * - `history.list {method?, service?, worker?, code?, state?, since?, until?, before?, limit?}` → finished calls, newest first, paged
 * - `calls.show {callId}` → everything known of one call: its record, progress, and history entry
 *
 * @example
 * await startService({ urls, name: 'inflight', methods: inflightMethods(view), notifications: inflightNotifications(view) });
 */
export function inflightMethods(view: InflightView, options: { readonly cancelOnWire?: (callId: string) => Promise<void> } = {}): Record<string, MethodDefinition<unknown, JsonValue>> {
  // Told on RabbitMQ too (NS.cancel), so a worker that does not track calls in Redis (another language) stops as well;
  // but only once the store holds the cancel: a worker hearing the wire first would store `cancelled` itself, and this
  // cancel would then read as someone else's (`already-cancelled`). A store failure still lets the wire cancel go.
  const cancel = async (callId: string): Promise<CancelOutcome> => {
    try {
      return await view.cancel(callId);
    } finally {
      void options.cancelOnWire?.(callId).catch(() => undefined);
    }
  };
  return {
    'inflight.list': { description: 'Calls running now, cluster-wide.', params: serviceSchema, handler: (p) => wire(() => view.list(p as { service?: string })) },
    'inflight.status': { description: "One call's state and stored outcome.", params: callIdSchema, handler: (p) => wire(() => view.status(callIdOf(p))) },
    'inflight.cancel': { description: 'Cancels a call by id, running or queued.', params: callIdSchema, handler: (p) => wire(() => cancel(callIdOf(p))) },
    'inflight.workers': { description: 'Live worker instances and their in-flight counts.', params: serviceSchema, handler: (p) => wire(() => view.workers(p as { service?: string })) },
    'history.list': { description: 'Finished calls, newest first: the last successes, and the last failures kept longer; filtered and paged.', params: historySchema, handler: (p) => wire(() => view.history(historyQuery(p))) },
    'calls.show': { description: "One call's detail: state, attempt, worker, progress, outcome, and its history entry.", params: callIdSchema, handler: (p) => wire(() => view.call(callIdOf(p))) },
  };
}

/**
 * `$/cancelRequest {id}` as a notification, after the Language Server
 * Protocol's: fire-and-forget cancellation by call id (the AMQP correlation id).
 */
export function inflightNotifications(view: InflightView): Record<string, NotificationDefinition> {
  return {
    '$/cancelRequest': {
      description: 'Cancels a call by its call id (params: {id}).',
      params: { type: 'object', properties: { id: { type: 'string', minLength: 1 } }, required: ['id'] },
      handler: async (p) => {
        await view.cancel(callIdOf(p));
      },
    },
  };
}

const delayedListSchema: JsonSchema = { type: 'object', properties: { limit: { type: 'integer', minimum: 1, maximum: 1000 } }, additionalProperties: false };
const delayedCancelSchema: JsonSchema = { type: 'object', properties: { callId: { type: 'string', minLength: 1, maxLength: 255 } }, required: ['callId'], additionalProperties: false };

/**
 * The delayed calls the broker recorded (delayed.ts) as JSON-RPC methods (docs/scheduling.md, "Delayed calls"):
 *
 * - `delayed.list {limit?}` → `{ calls: [{ callId, service, method, dueAt, createdAt, deadline, principal? }] }`, soonest first (default 100)
 * - `delayed.cancel {callId}` → `{ callId, outcome, listed }`: it never runs; also told on RabbitMQ (`cancelOnWire`, with its deadline)
 *
 * @example await startService({ urls, name: 'delayed', methods: delayedMethods(view) });
 */
export function delayedMethods(view: Pick<InflightView, 'delayed'>, options: { readonly cancelOnWire?: (callId: string, deadline: number | undefined) => Promise<void> } = {}): Record<string, MethodDefinition<unknown, JsonValue>> {
  return {
    'delayed.list': {
      description: 'Delayed calls not yet due, soonest first: {limit?} → {calls}.',
      params: delayedListSchema,
      handler: (p) => wire(async () => ({ calls: await view.delayed.list((p as { limit?: number } | undefined)?.limit ?? 100) })),
    },
    'delayed.cancel': {
      description: 'Cancels a delayed call by id before it starts: {callId} → {callId, outcome, listed}.',
      params: delayedCancelSchema,
      handler: (p) => wire(async () => {
        const callId = callIdOf(p);
        // The deadline read first: the cancel unlists the call, and the wire cancel is remembered until it.
        const deadline = await view.delayed.deadlineOf(callId);
        try {
          return { callId, ...(await view.delayed.cancel(callId)) };
        } finally {
          void options.cancelOnWire?.(callId, deadline).catch(() => undefined);
        }
      }),
    },
  };
}
