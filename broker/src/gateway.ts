import type { AddressInfo } from 'node:net';
import { guardAvailability, type RpcClient, type ServiceRegistry } from '@warren/amqp';
import { type WireConnection } from '@warren/amqp-transport';
import { resolveDecodeLimits } from '@warren/jsonrpc';
import fastify, { LogController, type FastifyBaseLogger, type FastifyError, type FastifyInstance, type FastifyReply } from 'fastify';
import { CallGate } from './gateway-calls';
import { registerConsole } from './console/routes';
import { registerAccess } from './http/access';
import { GatewayRefusal, rawRefusal, refusalForFastifyError, refusedWith, sendRefusal, type RefusedReply } from './http/errors';
import { isLoopbackAddress, registerHostGuard } from './http/host-guard';
import { registerOpsRoutes } from './http/ops-routes';
import { lazyRequestLogger } from './http/request-logger';
import { registerRpcRoute } from './http/rpc-route';
import { registerJobsRoute } from './http/jobs-route';
import { registerSecurityHeaders } from './http/security-headers';
import { serverTimeouts } from './http/timeouts';
import type { InflightSource } from './inflight';
import { jobMethods } from './job-methods';
import { LiveCatalogue } from './live-catalogue';
import { createMcpServer } from './mcp/server';
import { McpSessions } from './mcp/sessions';
import { BrokerMetrics } from './metrics';
import { methodFilter, resolveGatewayOptions, type GatewayOptions, type ResolvedGatewayOptions } from './options';
import { sharedRead } from './shared-read';
import { amqpQueueStats, managementQueueStats, type QueueStatsReader } from './queue-stats';

/** What the gateway needs from the rest of the broker: one client, its connection, the live registry. */
export interface GatewayDeps {
  readonly client: RpcClient;
  readonly connection: WireConnection;
  readonly registry: ServiceRegistry;
}

/** Content types read as JSON-RPC; anything else answers 415. */
export const jsonContentTypes = ['application/json', 'application/json-rpc', 'application/jsonrequest'];

/** The HTTP side of the broker, built but not listening. */
export interface Gateway {
  /** The fastify app: `app.inject()` in tests, or `listen()`. */
  readonly app: FastifyInstance;
  readonly options: ResolvedGatewayOptions;
  readonly catalogue: LiveCatalogue;
  readonly metrics: BrokerMetrics;
  readonly calls: CallGate;
  readonly sessions: McpSessions;
  /** Listens on the configured host and port; resolves with the base URL, e.g. `http://127.0.0.1:18001`. */
  listen(): Promise<string>;
  /** Stops accepting, ends MCP sessions, lets in-flight HTTP requests finish. Idempotent; leaves the deps open. */
  close(): Promise<void>;
}

/**
 * Builds the gateway's fastify app on an RPC client and a registry someone
 * else owns (startBroker, or a test). Nothing listens until `listen()`.
 *
 * @example
 * const gateway = await buildGateway({ client, connection, registry }, { port: 0 });
 * const url = await gateway.listen();
 * await fetch(`${url}/rpc`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}' });
 */
export async function buildGateway(deps: GatewayDeps, options: GatewayOptions = {}): Promise<Gateway> {
  const o = resolveGatewayOptions(options);
  const log = o.logger.child({ component: 'gateway' });
  const allow = methodFilter(o.allowMethods);
  // Resolved once here: the decoder fills in defaults per payload otherwise.
  const decodeLimits = resolveDecodeLimits({ ...o.decodeLimits, maxBytes: o.bodyLimitBytes });
  const catalogue = new LiveCatalogue(deps.registry);
  const metrics: BrokerMetrics = new BrokerMetrics({
    reconnects: () => deps.connection.reconnects,
    lateReplies: () => deps.client.stats().lateReplies,
    returned: () => deps.client.stats().returned,
    pending: () => deps.client.stats().pending,
    // Read at scrape time only, by when `sessions` below exists.
    sessions: (): { sse: number; streamable: number } => sessions.counts(),
    instances: () => deps.registry.list().map((i) => i.service),
    // Read at scrape time only, by when `availability` below exists.
    queues: async () => {
      const services = [...new Set(deps.registry.list().map((i) => i.service))];
      const { byService } = await queueStats.read(services);
      return services.flatMap((service) => {
        const q = byService.get(service);
        return q === undefined ? [] : [{ service, ...q }];
      });
    },
    droppedAnnouncements: () => deps.registry.dropped,
    schedules: () => o.scheduleCounts?.() ?? new Map(),
    tracking: () => deps.registry.list().flatMap((i) => (i.tracking === undefined ? [] : [{ service: i.service, state: i.tracking.state }])),
  }, o.defaultMetrics);
  const jobs = jobMethods(deps.registry);
  const calls: CallGate = new CallGate({
    client: deps.client,
    maxConcurrent: o.maxConcurrentCalls,
    metrics,
    logger: o.logger,
    // Method names come from callers: only ones some service announced become label values.
    methodLabel: (method) => (method === 'rpc.discover' || catalogue.current().methods.has(method) ? method : '(unknown)'),
    jobOptions: (method) => jobs.optionsFor(method),
  });
  const sessions: McpSessions = new McpSessions({
    createServer: (principal) => createMcpServer({
      catalogue, gate: calls, allow: principal.allow, timeoutMs: o.defaultTimeoutMs, info: { name: 'warren', version: '0.1.0' }, asker: principal,
    }),
    maxSessions: o.maxSessions,
    maxSessionsPerToken: o.maxSessionsPerToken,
    maxSessionsPerIp: o.maxSessionsPerIp,
    initTimeoutMs: o.sessionInitTimeoutMs,
    maxOutputBytes: o.maxSessionOutputBytes,
    sseKeepAliveMs: o.sseKeepAliveMs,
    decodeLimits,
    logger: o.logger,
  });
  catalogue.on('toolsChanged', () => {
    for (const server of sessions.servers()) server.sendToolListChanged().catch(() => undefined);
  });

  const app = fastify({
    // Typed as fastify's base logger so the app keeps the plain FastifyInstance type route modules take.
    loggerInstance: o.logger.child({ component: 'http' }) as FastifyBaseLogger,
    // One line per call is logged by the call gate, at debug; fastify's two lines per request at info would drown it.
    logController: new LogController({ disableRequestLogging: true }),
    // request.log is made when a request first logs, not for every request (request-logger.ts).
    childLoggerFactory: lazyRequestLogger,
    bodyLimit: o.bodyLimitBytes,
    ...serverTimeouts(o),
    forceCloseConnections: 'idle',
    // Malformed HTTP (refused by Node's parser) and unreadable URLs (by the router) answer the
    // documented JSON-RPC refusal rather than fastify's own JSON body.
    clientErrorHandler: (err, socket) => {
      if (err.code === 'ECONNRESET' || socket.destroyed) return;
      const timeout = err.code === 'ERR_HTTP_REQUEST_TIMEOUT';
      const status = err.code === 'HPE_HEADER_OVERFLOW' ? 431 : timeout ? 408 : 400;
      log.debug({ err: { code: err.code, message: err.message } }, timeout ? 'request not received in time' : 'malformed HTTP request refused');
      const code = timeout ? 'WARREN_GW_REQUEST_TIMEOUT' : 'WARREN_GW_BAD_REQUEST';
      metrics.refused.inc({ reason: GatewayRefusal[code].reason });
      if (socket.writable) socket.write(rawRefusal(code, status));
      socket.destroy();
    },
    frameworkErrors: (error, request, reply) => {
      request.log.debug({ err: error }, 'request refused');
      // The option is generic over route types the refusal does not use.
      void sendRefusal(reply as unknown as FastifyReply, 'WARREN_GW_BAD_REQUEST');
    },
  });
  // Only JSON is read (fastify also reads text/plain by default); the rest answers 415.
  app.removeAllContentTypeParsers();
  // Bodies stay bytes: the JSON-RPC decoder parses them once, safely, with its own limits.
  app.addContentTypeParser(jsonContentTypes, { parseAs: 'buffer' }, (_request, body, done) => done(null, body));

  // Every route, including ones added later by other modules: headers first (refusals carry them
  // too), then Host/Origin (DNS rebinding), then rate limits and the bearer token.
  // Refusals (sendRefusal marks the reply) are counted by reason once answered, whichever hook or route refused.
  app.addHook('onResponse', (_request, reply, done) => {
    const code = (reply as RefusedReply)[refusedWith];
    if (code !== undefined) metrics.refused.inc({ reason: GatewayRefusal[code].reason });
    done();
  });
  registerSecurityHeaders(app);
  registerHostGuard(app, o);
  registerAccess(app, { tokens: o.tokens, rateLimit: o.rateLimit, allow });

  app.setErrorHandler((error: FastifyError, request, reply) => {
    const code = refusalForFastifyError(error);
    const extra = code === 'WARREN_GW_BODY_TOO_LARGE' ? { limit: o.bodyLimitBytes } : {};
    if (code === 'WARREN_GW_INTERNAL') request.log.error({ err: error, url: request.url }, 'request failed');
    else request.log.debug({ err: error, url: request.url }, 'request refused');
    return sendRefusal(reply, code, extra);
  });

  registerRpcRoute(app, { gate: calls, allow, decodeLimits, defaultTimeoutMs: o.defaultTimeoutMs, maxTimeoutMs: o.maxTimeoutMs, maxConcurrentCalls: o.maxConcurrentCalls });
  registerJobsRoute(app, { gate: calls });
  // GET /inflight and the console's feed read the whole cluster's calls (a GET per call listed): however
  // many clients poll, one read at a time reaches the store.
  const source = o.inflight;
  const status = source?.status?.bind(source);
  const inflight: InflightSource | undefined = source && { list: sharedRead(() => source.list()), ...(status === undefined ? {} : { status }) };
  // A call to a service without consumers answers -32002 at once; /services shows each queue's depth.
  const availability = guardAvailability(deps.client, deps.connection, deps.registry);
  // The management API when configured (rates, unacked, delay queues), else passive declares.
  const queueStats: QueueStatsReader = o.rabbitmqManagement
    ? managementQueueStats(o.rabbitmqManagement, deps.client.namespace, availability.depths)
    : amqpQueueStats(availability.depths);
  registerOpsRoutes(app, { mode: o.mode, connection: deps.connection, catalogue, metrics, gate: calls, probes: o.probes, inflight, startedAt: Date.now(), queueStats });
  sessions.register(app);
  await registerConsole(app, { gate: calls, catalogue, inflight, logger: o.logger }, o.console);
  const openRequests = new OpenRequests(app.server);
  // Event streams never end by themselves: close them before the server waits for its connections.
  let draining = false;
  app.addHook('preClose', async () => {
    draining = true;
    await sessions.closeAll();
  });
  // A keep-alive connection whose request finishes during shutdown would hold close() until its
  // keep-alive timeout: tell the client to hang up after this response.
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (draining) void reply.header('connection', 'close');
    done(null, payload);
  });
  await app.ready();

  let closing: Promise<void> | undefined;
  return {
    app,
    options: o,
    catalogue,
    metrics,
    calls,
    sessions,
    async listen() {
      await app.listen({ host: o.host, port: o.port });
      const address = app.server.address() as AddressInfo;
      const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
      log.info({ host: address.address, port: address.port, auth: o.auth }, 'gateway listening');
      if (o.auth === 'none' && !isLoopbackAddress(o.host)) {
        log.warn({ host: o.host }, 'gateway listens on a non-loopback address without auth: anyone who can reach it can call every method (set GATEWAY_TOKENS)');
      }
      return `http://${host}:${address.port}`;
    },
    close() {
      closing ??= (async () => {
        const closed = app.close();
        // Phase one: requests under way (relayed calls, tool calls) finish, within the timeout;
        // MCP event streams were ended by preClose. Phase two: cut whatever is left, such as a
        // connection whose client went away mid-request, which would otherwise hold close() open.
        await openRequests.drained(o.shutdownTimeoutMs);
        app.server.closeAllConnections();
        try {
          await closed;
        } finally {
          catalogue.close();
          jobs.close();
          availability.close();
        }
      })();
      return closing;
    },
  };
}

/** Counts HTTP requests whose response has not closed yet, fastify-handled and hijacked alike. */
class OpenRequests {
  private open = 0;
  private waiters: (() => void)[] = [];

  constructor(server: FastifyInstance['server']) {
    server.on('request', (_request, response) => {
      this.open++;
      response.once('close', () => {
        if (--this.open === 0) for (const wake of this.waiters.splice(0)) wake();
      });
    });
  }

  /** Resolves when no request is open, or after `timeoutMs`. */
  drained(timeoutMs: number): Promise<void> {
    if (this.open === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(done, timeoutMs);
      const waiters = this.waiters;
      function done(): void {
        clearTimeout(timer);
        const i = waiters.indexOf(done);
        if (i >= 0) waiters.splice(i, 1);
        resolve();
      }
      waiters.push(done);
    });
  }
}
