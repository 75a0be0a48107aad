import type { ServerOptions } from 'node:http';

/**
 * The HTTP server's request timeouts, as fastify options. Node answers a
 * request whose headers (`headersTimeoutMs`) or whole body
 * (`requestTimeoutMs`) have not arrived in time and closes the connection;
 * the gateway's clientErrorHandler words it as WARREN_GW_REQUEST_TIMEOUT
 * (408). Both clocks stop once the request is read, so an SSE stream or a
 * `/mcp` response stream, once open, is never cut by them.
 *
 * Node looks for late requests every `connectionsCheckingInterval` (30 s by
 * default, which would let a 30 s timeout run to 60 s): a quarter of the
 * shorter timeout, between 100 ms and 1 s, keeps the overrun small.
 */
export function serverTimeouts(o: { readonly requestTimeoutMs: number; readonly headersTimeoutMs: number }): { requestTimeout: number; http: ServerOptions } {
  const interval = Math.max(100, Math.min(1000, Math.floor(Math.min(o.requestTimeoutMs, o.headersTimeoutMs) / 4)));
  return { requestTimeout: o.requestTimeoutMs, http: { headersTimeout: o.headersTimeoutMs, requestTimeout: o.requestTimeoutMs, connectionsCheckingInterval: interval } };
}
