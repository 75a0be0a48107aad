import type { WireConnection } from '@warren/amqp-transport';
import type { FastifyInstance } from 'fastify';
import { inflightScope } from '../authz';
import type { CallGate } from '../gateway-calls';
import type { InflightSource } from '../inflight';
import type { LiveCatalogue } from '../live-catalogue';
import type { BrokerMetrics } from '../metrics';
import { sharedProbe } from '../probe-cache';
import { runProbes, type ReadinessProbe } from '../probes';
import type { QueueStatsReader } from '../queue-stats';
import { servicesView, type ServicesBody } from '../services-view';

export interface OpsRouteOptions {
  /** Reported as `mode` by /readyz and /services, so nobody mistakes an embedded run for a durable one. */
  readonly mode: 'rabbitmq' | 'embedded';
  readonly connection: WireConnection;
  readonly catalogue: LiveCatalogue;
  readonly metrics: BrokerMetrics;
  readonly gate: CallGate;
  readonly probes: readonly ReadinessProbe[];
  readonly inflight: InflightSource | undefined;
  readonly startedAt: number;
  /** Reads the services' queue figures (management API or passive declares); without it /services shows none. */
  readonly queueStats?: QueueStatsReader;
}

/** `/healthz`, `/readyz` and `/metrics` are public (probes, scrapers); `/services` and `/inflight` sit behind auth. */
export function registerOpsRoutes(app: FastifyInstance, o: OpsRouteOptions): void {
  app.get('/healthz', { config: { public: true } }, async () => ({ status: 'ok', uptimeMs: Date.now() - o.startedAt }));

  // Probes shared by concurrent /readyz requests and reused for a moment: a burst of probes costs one check.
  const probes = o.probes.map((p) => sharedProbe(p));
  app.get('/readyz', { config: { public: true } }, async (_request, reply) => {
    const state = o.connection.state;
    const amqpOk = state.type === 'open';
    const results = await runProbes(probes);
    const ready = amqpOk && results.every((p) => p.ok || !p.required);
    return reply.code(ready ? 200 : 503).send({
      status: ready ? 'ready' : 'unready',
      mode: o.mode,
      rabbitmq: { ok: amqpOk, state: state.type, reconnects: o.connection.reconnects },
      dependencies: results,
    });
  });

  app.get('/metrics', { config: { public: true } }, async (_request, reply) => {
    const text = await o.metrics.registry.metrics();
    return reply.type(o.metrics.registry.contentType).send(text);
  });

  app.get('/services', async (): Promise<ServicesBody> => {
    const catalogue = o.catalogue.current();
    const read = await o.queueStats?.read(catalogue.services.map((s) => s.name));
    // Says where the queue figures come from, and why not from the management API when it failed.
    const queueSource = read === undefined ? {} : { queueSource: { source: read.source, ...(read.fallbackReason === undefined ? {} : { fallbackReason: read.fallbackReason }) } };
    return { mode: o.mode, ...queueSource, ...servicesView(catalogue, catalogue.services.map((s) => read?.byService.get(s.name))) };
  });

  // A client token sees only the calls it made through this gateway (cluster-wide entries are matched
  // by call id); an operator token, or a gateway without auth, sees everything.
  app.get('/inflight', async (request, reply) => {
    const { principal } = request;
    const scope = inflightScope(principal);
    const gateway = o.gate.list(scope === 'all' ? undefined : (principal.token ?? -1));
    if (!o.inflight) {
      return { configured: false, note: 'No in-flight store is configured; only the calls in flight through this gateway are shown.', scope, calls: [], gateway };
    }
    try {
      const all = await o.inflight.list();
      return { configured: true, scope, calls: scope === 'all' ? all : all.filter((c) => o.gate.owns(principal, c.callId)), gateway };
    } catch (err) {
      reply.log.warn({ err }, 'in-flight store unavailable');
      return reply.code(503).send({ configured: true, error: 'in-flight store unavailable', calls: [], gateway });
    }
  });
}
