// The ops port of a service process: a tiny HTTP server for probes
// (docker-compose healthchecks, Kubernetes liveness/readiness) and, later,
// scrapers (`/metrics`, issue 31, joins as one more route). Two routes do not
// need a framework: node:http, GET/HEAD only, nothing read from the body.
// The only file of @warren/amqp allowed to import node:http (eslint.config.mjs).
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What a route answers: a status and a JSON body (or text, with its content type). */
export interface OpsAnswer {
  readonly status: number;
  readonly body: unknown;
  /** @default 'application/json' (the body is JSON-encoded); anything else sends `body` as a string. */
  readonly contentType?: string;
}

export interface OpsServerOptions {
  /** TCP port; 0 picks a free one (tests). */
  readonly port: number;
  /** Interface to listen on: loopback unless a scraper outside the container or host must reach it. @default '127.0.0.1' */
  readonly host?: string;
  /** Reported by both probes. */
  readonly name: string;
  /** Whether the process does its work now: for a service, connected to RabbitMQ and consuming. */
  readonly ready: () => boolean;
  /** More GET routes by path, e.g. `/metrics`. @default {} */
  readonly routes?: Readonly<Record<string, () => OpsAnswer | Promise<OpsAnswer>>>;
}

/** A listening ops server. `close()` is idempotent and also ends kept-alive connections. */
export interface OpsServer {
  /** `http://host:port`, with the port actually bound. */
  readonly url: string;
  close(): Promise<void>;
}

/** Default ops interface: probes run inside the container or on the host, so loopback is enough. */
export const defaultOpsHost = '127.0.0.1';

/**
 * Starts the ops server: `GET /healthz` answers 200 while the process runs
 * (liveness: the event loop answers), `GET /readyz` 200 when `ready()` says so
 * and 503 otherwise (readiness: starting, reconnecting, draining). Rejects if
 * the port cannot be bound, so a main fails to start rather than run unprobed.
 *
 * @example
 * const ops = await startOpsServer({ port: 9464, name: 'calculator', ready: () => service.ready });
 * // curl -s 127.0.0.1:9464/readyz  → {"status":"ready","name":"calculator"}
 * await ops.close();
 */
export async function startOpsServer(options: OpsServerOptions): Promise<OpsServer> {
  const startedAt = Date.now();
  const routes: Record<string, () => OpsAnswer | Promise<OpsAnswer>> = {
    '/healthz': () => ({ status: 200, body: { status: 'ok', name: options.name, uptimeMs: Date.now() - startedAt } }),
    '/readyz': () => (options.ready() ? { status: 200, body: { status: 'ready', name: options.name } } : { status: 503, body: { status: 'not ready', name: options.name } }),
    ...options.routes,
  };
  const server = createServer((request, response) => void answer(routes, request, response));
  // A probe that never sends its request must not hold a socket for long.
  server.requestTimeout = 5000;
  server.headersTimeout = 5000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host ?? defaultOpsHost, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${host}:${address.port}`,
    close: () =>
      (closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Probes keep connections alive; without this, close() would wait for them to time out.
        server.closeAllConnections();
      })),
  };
}

async function answer(routes: Record<string, () => OpsAnswer | Promise<OpsAnswer>>, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const path = new URL(request.url ?? '/', 'http://ops').pathname;
  const route = Object.hasOwn(routes, path) ? routes[path] : undefined;
  let result: OpsAnswer;
  if (request.method !== 'GET' && request.method !== 'HEAD') result = { status: 405, body: { error: 'method not allowed' } };
  else if (route === undefined) result = { status: 404, body: { error: 'not found', routes: Object.keys(routes) } };
  else {
    try {
      result = await route();
    } catch {
      result = { status: 500, body: { error: 'route failed' } };
    }
  }
  const json = result.contentType === undefined;
  const text = json ? JSON.stringify(result.body) : String(result.body);
  response.writeHead(result.status, {
    'content-type': json ? 'application/json' : (result.contentType as string),
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store',
    ...(result.status === 405 ? { allow: 'GET, HEAD' } : {}),
  });
  response.end(request.method === 'HEAD' ? undefined : text);
}
