import { setMaxListeners } from 'node:events';
import type { Socket } from 'node:net';
import { relayPayload, traced } from '@warren/amqp';
import { encodeResponse, type DecodeLimits } from '@warren/jsonrpc';
import type { FastifyInstance } from 'fastify';
import type { CallGate } from '../gateway-calls';
import { delayOf } from './delay-headers';
import { sendRefusal } from './errors';

export interface RpcRouteOptions {
  readonly gate: Pick<CallGate, 'clientFor'>;
  readonly allow: (method: string) => boolean;
  readonly decodeLimits: DecodeLimits;
  readonly defaultTimeoutMs: number;
  readonly maxTimeoutMs: number;
  /** The gate's limit on calls in flight (all connections together): no connection can have more calls listening for its hang-up. */
  readonly maxConcurrentCalls: number;
}

/**
 * `POST /rpc`: one JSON-RPC message or a batch, each call routed over
 * RabbitMQ by relayPayload. 200 with the response(s), errors included; 204
 * when there is nothing to answer (notifications only).
 */
export function registerRpcRoute(app: FastifyInstance, o: RpcRouteOptions): void {
  const hangUps = new HangUps(o.maxConcurrentCalls);
  app.post('/rpc', async (request, reply) => {
    const timeoutMs = callTimeout(request.headers['x-timeout-ms'], o.defaultTimeoutMs, o.maxTimeoutMs);
    if (timeoutMs === undefined) return sendRefusal(reply, 'WARREN_GW_BAD_TIMEOUT');
    // A delayed call's deadline (X-Timeout-Ms) counts from when it is due.
    const delay = delayOf(request.headers, Date.now());
    if (delay === undefined) return sendRefusal(reply, 'WARREN_GW_BAD_DELAY');
    const body = Buffer.isBuffer(request.body) ? request.body : undefined;
    const { principal } = request;
    // The request's span (when tracing is on) is the parent of every call it relays; off, the caller's
    // traceparent and tracestate go on to the calls as they came.
    const answer: Awaited<ReturnType<typeof relayPayload>> = await traced('POST /rpc', { 'http.request.method': 'POST', 'http.route': '/rpc', 'url.path': '/rpc', 'rpc.system': 'jsonrpc' }, request.headers, async (trace, span) => {
      const relayed = await relayPayload(o.gate.clientFor('http', principal), body ?? '', {
        decodeLimits: o.decodeLimits,
        // The principal's predicate already includes the gateway's allow-list.
        allow: principal.allow,
        // A caller that hangs up cancels what it was waiting for.
        call: { timeoutMs, signal: hangUps.of(request.raw.socket), ...delay, ...trace },
      });
      span?.setAttribute('http.response.status_code', relayed === null ? 204 : 200);
      return relayed;
    });
    if (answer === null) return reply.code(204).send();
    return reply.code(200).type('application/json').send(encodeResponse(answer));
  });
}

/**
 * One hang-up signal per connection, aborted when the connection closes: the calls of every request
 * still unanswered on it are cancelled then (calls already answered have let go of it). Made once per
 * connection rather than once per request, as an AbortSignal costs about 5 µs to make here (a third of
 * what the gateway spends on a request besides Node's HTTP and the AMQP client, measured with
 * `npm run bench:gateway -- --floor`).
 */
class HangUps {
  private readonly signals = new WeakMap<Socket, AbortSignal>();

  constructor(private readonly maxListeners: number) {}

  of(socket: Socket): AbortSignal {
    const known = this.signals.get(socket);
    if (known !== undefined) return known;
    const controller = new AbortController();
    // Each call in flight on the connection listens until it settles (a batch's calls, pipelined requests'):
    // never more than the gate lets through at once, so more would be a leak.
    setMaxListeners(this.maxListeners + 1, controller.signal);
    socket.once('close', () => controller.abort(new Error('client closed the connection')));
    this.signals.set(socket, controller.signal);
    return controller.signal;
  }
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
