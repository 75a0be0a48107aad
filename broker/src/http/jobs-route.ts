import { maxDelayMs } from '@warren/amqp';
import { ErrorCode, MethodNotFoundError, toJsonRpcError, type ErrorObject, type JsonValue, type Params } from '@warren/jsonrpc';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { CallGate } from '../gateway-calls';
import { delayOf } from './delay-headers';

export interface JobsRouteOptions {
  readonly gate: Pick<CallGate, 'enqueue'>;
}

/** The HTTP status each refusal or failure of an enqueue answers with; anything else is 500. */
const statusOf: Readonly<Record<number, number>> = {
  [ErrorCode.InvalidRequest]: 400, [ErrorCode.InvalidParams]: 400, [ErrorCode.MethodNotFound]: 404, [ErrorCode.Unauthorized]: 403,
  [ErrorCode.ServiceUnavailable]: 503, [ErrorCode.Overloaded]: 503, [ErrorCode.ConnectionLost]: 503,
};

/**
 * `POST /jobs`: enqueues a job (docs/jobs.md, docs/gateway.md "Jobs"). The body is
 * `{"method": "report.render", "params": {...}, "id": "report-7"}` (`params` and `id` optional);
 * `X-Delay-Ms` / `X-Not-Before` delay it as they delay a call, `X-Timeout-Ms` is the time it has to
 * finish from when it is due (default 1 h, not capped by the gateway's call maximum: nobody waits).
 * 202 `{"id", "duplicate", "deadline", "dueAt"?, "state"?}` once RabbitMQ confirmed it (or the id was
 * taken: `duplicate: true` and the taken job's `state`); else `{"error": {code, message, data?}}`,
 * 404 for a method no queue is bound for (-32601), 403 refused, 503 unavailable, 400 a bad body.
 * A job's state and outcome: `inflight.status` (or `calls.show`) with its id, on POST /rpc.
 */
export function registerJobsRoute(app: FastifyInstance, o: JobsRouteOptions): void {
  app.post('/jobs', async (request, reply) => {
    const job = jobOf(request.body);
    if (job === undefined) return fail(reply, { code: ErrorCode.InvalidRequest, message: 'the body must be {"method": string, "params"?: array | object, "id"?: string}' });
    const delay = delayOf(request.headers, Date.now());
    const timeout = timeoutOf(request.headers['x-timeout-ms']);
    if (delay === undefined || timeout === null) return fail(reply, { code: ErrorCode.InvalidRequest, message: 'X-Delay-Ms, X-Not-Before or X-Timeout-Ms is malformed' });
    if (!request.principal.allow(job.method)) return fail(reply, new MethodNotFoundError().toErrorObject());
    try {
      const done = await o.gate.enqueue(job.method, job.params, { ...delay, ...(job.id === undefined ? {} : { jobId: job.id }), ...(timeout === undefined ? {} : { timeoutMs: timeout }) }, request.principal);
      const body: Record<string, JsonValue> = { id: done.id, duplicate: done.duplicate, deadline: done.deadline, ...(done.dueAt === undefined ? {} : { dueAt: done.dueAt }), ...(done.existing ? { state: done.existing.state } : {}) };
      return reply.code(202).type('application/json').send(JSON.stringify(body));
    } catch (err) {
      // A bad job id or delay is the caller's; the rest is mapped as a call's failure would be.
      if (err instanceof TypeError || err instanceof RangeError) return fail(reply, { code: ErrorCode.InvalidRequest, message: err.message });
      return fail(reply, toJsonRpcError(err).toErrorObject());
    }
  });
}

function fail(reply: FastifyReply, error: ErrorObject): FastifyReply {
  return reply.code(statusOf[error.code] ?? 500).type('application/json').send(JSON.stringify({ error }));
}

/** The body's job, or undefined when it is not one. Never throws. */
function jobOf(body: unknown): { readonly method: string; readonly params?: Params; readonly id?: string } | undefined {
  if (!Buffer.isBuffer(body)) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const { method, params, id } = value as Record<string, unknown>;
  if (typeof method !== 'string' || method === '') return undefined;
  if (params !== undefined && (typeof params !== 'object' || params === null)) return undefined;
  if (id !== undefined && typeof id !== 'string') return undefined;
  return { method, ...(params === undefined ? {} : { params: params as Params }), ...(id === undefined ? {} : { id }) };
}

/** `X-Timeout-Ms`: undefined when absent, null when not a whole number of ms in 1..2^32 − 1. */
function timeoutOf(header: string | string[] | undefined): number | undefined | null {
  if (header === undefined) return undefined;
  const text = Array.isArray(header) ? header[0] : header;
  if (text === undefined || !/^\s*\d{1,10}\s*$/.test(text)) return null;
  const value = Number(text);
  return value >= 1 && value <= maxDelayMs ? value : null;
}
