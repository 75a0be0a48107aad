import { setMaxListeners } from 'node:events';
import { relayPayload, traced } from '@warren/amqp';
import { encodeResponse, resolveDecodeLimits, type DecodeLimits } from '@warren/jsonrpc';
import type { FastifyInstance } from 'fastify';
import type { CallGate } from '../gateway-calls';
import { delayOf } from './delay-headers';
import { sendRefusal } from './errors';

export interface RpcRouteOptions {
  readonly gate: CallGate;
  readonly allow: (method: string) => boolean;
  readonly decodeLimits: DecodeLimits;
  readonly defaultTimeoutMs: number;
  readonly maxTimeoutMs: number;
}

/**
 * `POST /rpc`: one JSON-RPC message or a batch, each call routed over
 * RabbitMQ by relayPayload. 200 with the response(s), errors included; 204
 * when there is nothing to answer (notifications only).
 */
export function registerRpcRoute(app: FastifyInstance, o: RpcRouteOptions): void {
  // Every call of a batch listens on the request's hang-up signal: up to the batch limit is expected, more would be a leak.
  const listenersPerRequest = resolveDecodeLimits(o.decodeLimits).maxBatch + 1;
  app.post('/rpc', async (request, reply) => {
    const timeoutMs = callTimeout(request.headers['x-timeout-ms'], o.defaultTimeoutMs, o.maxTimeoutMs);
    if (timeoutMs === undefined) return sendRefusal(reply, 'WARREN_GW_BAD_TIMEOUT');
    // A delayed call's deadline (X-Timeout-Ms) counts from when it is due.
    const delay = delayOf(request.headers, Date.now());
    if (delay === undefined) return sendRefusal(reply, 'WARREN_GW_BAD_DELAY');
    // A caller that hangs up cancels what it was waiting for.
    const hangUp = new AbortController();
    const body = Buffer.isBuffer(request.body) ? request.body : undefined;
    // A batch's calls each listen to it: past Node's default of 10 listeners it would warn of a leak. Raised for every
    // request, as it costs next to nothing: raised only for a body starting with `[`, CI's run printed that warning.
    setMaxListeners(listenersPerRequest, hangUp.signal);
    reply.raw.on('close', () => {
      if (!reply.raw.writableFinished) hangUp.abort(new Error('client closed the connection'));
    });
    const { principal } = request;
    // The request's span (when tracing is on) is the parent of every call it relays; off, the caller's
    // traceparent and tracestate go on to the calls as they came.
    const answer: Awaited<ReturnType<typeof relayPayload>> = await traced('POST /rpc', { 'http.request.method': 'POST', 'http.route': '/rpc', 'url.path': '/rpc', 'rpc.system': 'jsonrpc' }, request.headers, async (trace, span) => {
      const relayed = await relayPayload(o.gate.clientFor('http', principal), body ?? '', {
        decodeLimits: o.decodeLimits,
        // The principal's predicate already includes the gateway's allow-list.
        allow: principal.allow,
        call: { timeoutMs, signal: hangUp.signal, ...delay, ...trace },
      });
      span?.setAttribute('http.response.status_code', relayed === null ? 204 : 200);
      return relayed;
    });
    if (answer === null) return reply.code(204).send();
    return reply.code(200).type('application/json').send(encodeResponse(answer));
  });
}

/**
 * The deadline a caller asked for in `X-Timeout-Ms`, cut to the gateway's
 * maximum; the default when absent; undefined when it is not a positive
 * integer (refused rather than guessed at).
 */
export function callTimeout(header: string | string[] | undefined, defaultMs: number, maxMs: number): number | undefined {
  if (header === undefined) return Math.min(defaultMs, maxMs);
  const text = Array.isArray(header) ? header[0] : header;
  if (text === undefined || !/^\s*\d{1,10}\s*$/.test(text)) return undefined;
  const value = Number(text);
  return value < 1 ? undefined : Math.min(value, maxMs);
}
