import type { RpcClient } from '@warren/amqp';
import { toJsonRpcError, type JsonValue, type Params } from '@warren/jsonrpc';
import type { Schedule } from './spec';
import type { LastRun } from './store-port';

/** How a fired call ended: what the last run records, and for a failure its wire message (logged, not stored). */
export type RunEnd = Pick<LastRun, 'outcome' | 'errorCode' | 'finishedAt'> & { readonly errorMessage?: string };

/** A call a schedule fired: its id at once, how it ended later (never rejects). */
export interface Fired {
  readonly callId: string;
  readonly at: number;
  readonly ended: Promise<RunEnd>;
}

/**
 * Fires one call of `schedule` through the normal client (so it is tracked when tracking is on,
 * retried, dead-lettered like any call). The call id is known before the publish, so the record
 * can name it.
 */
export function fireCall(client: RpcClient, schedule: Schedule, now: () => number): Fired {
  // The JSON-RPC id is the call id: without one, the client's counter would move and nextCallId() be one off.
  const callId = client.nextCallId();
  const at = now();
  const ended = client.call(schedule.method, schedule.params as Params | undefined, { timeoutMs: schedule.timeoutMs, id: callId }).then(
    () => ({ outcome: 'ok' as const, finishedAt: now() }),
    (err: unknown) => {
      const wire = toJsonRpcError(err);
      return { outcome: 'error' as const, errorCode: wire.code, errorMessage: wire.message, finishedAt: now() };
    },
  );
  return { callId, at, ended };
}

/** JSON of a value made of plain data (the store's records), for a JSON-RPC answer. */
export function asJson(value: unknown): JsonValue {
  return JSON.parse(JSON.stringify(value)) as JsonValue;
}
