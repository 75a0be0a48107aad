import type { ServiceMethod } from '@warren/amqp';
import { InvalidParamsError, ServiceUnavailableError, type JsonSchema, type JsonValue } from '@warren/jsonrpc';
import type { ControlRefusal, ControlResult, ScheduleControl } from './control';
import { asJson } from './fire';
import { namePattern, scheduleInputProperties, type ScheduleInput } from './spec';
import { targetRefusalMessage } from './target-check';

const nameSchema: JsonSchema = { type: 'object', properties: { name: { type: 'string', pattern: namePattern.source } }, required: ['name'], additionalProperties: false };
const addSchema: JsonSchema = { type: 'object', properties: { ...scheduleInputProperties, replace: { type: 'boolean' }, allowUnserved: { type: 'boolean' } }, required: ['name', 'method'], additionalProperties: false };

/** The message of a refusal: the method check's say what to do; the others are told by their `data.reason`. */
function refusalMessage(refusal: ControlRefusal): string | undefined {
  return refusal.reason === 'method_not_served' || refusal.reason === 'params_rejected' ? targetRefusalMessage(refusal) : undefined;
}

/** A refusal answers -32602 with its reason; a store that does not answer, -32002 (retryable). */
async function answer<T>(work: () => Promise<ControlResult<T>>): Promise<JsonValue> {
  let result: ControlResult<T>;
  try {
    result = await work();
  } catch (err) {
    throw new ServiceUnavailableError('schedule store unavailable', { reason: 'schedule_store_unavailable' }, { cause: err });
  }
  if (!result.ok) throw new InvalidParamsError(refusalMessage(result.refusal), asJson(result.refusal));
  return asJson(result.value);
}

const nameOf = (p: unknown): string => (p as { name: string }).name;

/**
 * Schedules as broker methods (docs/scheduling.md, docs/gateway.md "Token scopes": an operator's):
 *
 * - `schedule.list {}` → `{ durable, items }`, each with its state (last run, outcome) and `nextRun`
 * - `schedule.add {name, method, params?, cron + timezone? | everyMs, overlap?, catchUp?, catchUpMax?, timeoutMs?, paused?, replace?, allowUnserved?}`:
 *   refused unless a running service serves `method` (or `allowUnserved`) and `params` fit its params schema
 * - `schedule.remove {name}`, `schedule.pause {name}`, `schedule.resume {name}`
 * - `schedule.runNow {name}` → `{ callId }`
 */
export function scheduleMethods(control: ScheduleControl, durable: boolean): Record<string, ServiceMethod> {
  return {
    'schedule.list': {
      description: 'Schedules with their last run, its outcome, the next run and whether paused: {} → {durable, items}.',
      params: { type: 'object', additionalProperties: false },
      handler: () => answer(async () => ({ ok: true, value: { durable, items: await control.list() } })),
    },
    'schedule.add': {
      description: 'Adds a schedule: {name, method, params?, cron (timezone?) or everyMs, overlap?, catchUp?, catchUpMax?, timeoutMs?, paused?, replace?, allowUnserved?}. The method must be served by a running service (unless allowUnserved) and the params fit its params schema.',
      params: addSchema,
      handler: (p) => {
        const { replace, allowUnserved, ...input } = p as ScheduleInput & { replace?: boolean; allowUnserved?: boolean };
        return answer(() => control.add(input, { replace: replace === true, allowUnserved: allowUnserved === true }));
      },
    },
    'schedule.remove': { description: 'Removes a schedule: {name}.', params: nameSchema, handler: (p) => answer(() => control.remove(nameOf(p))) },
    'schedule.pause': { description: 'Pauses a schedule (no occurrence fires): {name}.', params: nameSchema, handler: (p) => answer(() => control.setPaused(nameOf(p), true)) },
    'schedule.resume': { description: 'Resumes a paused schedule from now on (nothing of the pause is caught up): {name}.', params: nameSchema, handler: (p) => answer(() => control.setPaused(nameOf(p), false)) },
    'schedule.runNow': { description: "Fires a schedule's call now: {name} → {callId}.", params: nameSchema, handler: (p) => answer(() => control.runNow(nameOf(p))) },
  };
}
