import type { DeadLetterQueues, ServiceMethod } from '@warren/amqp';
import { InvalidParamsError, type JsonSchema, type JsonValue } from '@warren/jsonrpc';

/** What the dead-letter methods need: the queues, and which services exist (for a list over all of them). */
export interface DlqDeps {
  readonly queues: DeadLetterQueues;
  /** Names of the services known now (the live registry). */
  readonly services: () => readonly string[];
  /** Deadline a replayed call gets when the caller names none. @default 60000 */
  readonly replayTimeoutMs?: number;
  /** Largest `timeoutMs` a replay may ask for. @default 3600000 */
  readonly maxReplayTimeoutMs?: number;
}

const service = { type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$' } as const;
const listSchema: JsonSchema = {
  type: 'object',
  properties: {
    service, offset: { type: 'integer', minimum: 0 }, limit: { type: 'integer', minimum: 1, maximum: 1000 },
    reason: { type: 'string', minLength: 1, maxLength: 200 }, method: { type: 'string', maxLength: 255 },
  },
  additionalProperties: false,
};
const showSchema: JsonSchema = { type: 'object', properties: { service, id: { type: 'string', minLength: 1, maxLength: 200 } }, required: ['service', 'id'], additionalProperties: false };
const replaySchema: JsonSchema = {
  type: 'object',
  properties: {
    service, id: { type: 'string', minLength: 1, maxLength: 200 }, all: { type: 'boolean' }, timeoutMs: { type: 'integer', minimum: 1 },
    ids: { type: 'array', minItems: 1, maxItems: 1000, uniqueItems: true, items: { type: 'string', minLength: 1, maxLength: 200 } },
  },
  required: ['service'],
  additionalProperties: false,
};
const purgeSchema: JsonSchema = { type: 'object', properties: { service }, required: ['service'], additionalProperties: false };

const json = (value: unknown): JsonValue => JSON.parse(JSON.stringify(value)) as JsonValue;

/**
 * The dead-letter queues as broker methods (docs/gateway-operators.md, "Dead letters"):
 *
 * - `dlq.list {service?, reason?, method?, offset?, limit?}` → `{ total, items }`, newest first (default limit 50)
 * - `dlq.show {service, id}` → the dead letter with its `request` and `amqp` (properties, headers); -32602 when there is none by that id
 * - `dlq.replay {service, id | ids | all: true, timeoutMs?}` → `{ replayed, callIds, replays: [{id, callId}], missing? }`: back to the service queue as new calls
 * - `dlq.purge {service}` → `{ purged }`
 */
export function dlqMethods(deps: DlqDeps): Record<string, ServiceMethod> {
  const defaultTimeout = deps.replayTimeoutMs ?? 60_000;
  const maxTimeout = deps.maxReplayTimeoutMs ?? 3_600_000;
  return {
    'dlq.list': {
      description: 'Dead-lettered requests, newest first, with why they were given up: {service?, reason?, method?, offset?, limit?} → {total, items}.',
      params: listSchema,
      handler: async (p) => {
        const { service: one, offset = 0, limit = 50, reason, method } = (p ?? {}) as { service?: string; offset?: number; limit?: number; reason?: string; method?: string };
        const all = await deps.queues.list(one === undefined ? [...new Set(deps.services())].sort() : [one]);
        const items = all.filter((d) => (reason === undefined || d.reason === reason) && (method === undefined || d.method === method));
        return json({ total: items.length, items: items.slice(offset, offset + limit) });
      },
    },
    'dlq.show': {
      description: 'One dead letter with its request body and AMQP properties and headers: {service, id}.',
      params: showSchema,
      handler: async (p) => {
        const { service: name, id } = p as { service: string; id: string };
        const found = await deps.queues.show(name, id);
        if (!found) throw new InvalidParamsError(undefined, { reason: 'no_such_dead_letter', service: name, id });
        return json(found);
      },
    },
    'dlq.replay': {
      description: 'Sends dead letters back to their service queue as new calls with a new deadline: {service, id}, {service, ids: [...]} or {service, all: true}, timeoutMs? → {replayed, callIds, replays: [{id, callId}]}.',
      params: replaySchema,
      handler: async (p) => {
        const { service: name, id, ids, all, timeoutMs } = p as { service: string; id?: string; ids?: string[]; all?: boolean; timeoutMs?: number };
        // Replaying everything is never what an empty request means.
        if ([id !== undefined, ids !== undefined, all === true].filter(Boolean).length !== 1) throw new InvalidParamsError(undefined, { reason: 'give exactly one of id, ids or all: true' });
        const done = await deps.queues.replay(name, { ...(id === undefined ? {} : { id }), ...(ids === undefined ? {} : { ids }), timeoutMs: Math.min(timeoutMs ?? defaultTimeout, maxTimeout) });
        if (id !== undefined && done.replayed === 0) throw new InvalidParamsError(undefined, { reason: 'no_such_dead_letter', service: name, id });
        // Those of `ids` no longer there (replayed or purged meanwhile) are named, the others replayed.
        const missing = ids?.filter((x) => !done.replays.some((r) => r.id === x)) ?? [];
        return json({ ...done, ...(missing.length === 0 ? {} : { missing }) });
      },
    },
    'dlq.purge': {
      description: "Empties a service's dead-letter queue: {service} → {purged}.",
      params: purgeSchema,
      handler: async (p) => json({ purged: await deps.queues.purge((p as { service: string }).service) }),
    },
  };
}
