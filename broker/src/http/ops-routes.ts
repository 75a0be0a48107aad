import { summarizeInstance, type AmqpConnection, type QueueDepth } from '@warren/amqp';
import type { FastifyInstance } from 'fastify';
import type { CallGate } from '../calls';
import type { InflightSource } from '../inflight';
import type { LiveCatalogue } from '../live-catalogue';
import type { BrokerMetrics } from '../metrics';
import { runProbes, type ReadinessProbe } from '../probes';

export interface OpsRouteOptions {
  readonly connection: AmqpConnection;
  readonly catalogue: LiveCatalogue;
  readonly metrics: BrokerMetrics;
  readonly gate: CallGate;
  readonly probes: readonly ReadinessProbe[];
  readonly inflight: InflightSource | undefined;
  readonly startedAt: number;
  /** Reads a service's request-queue depth (undefined: no queue, or RabbitMQ unreachable). */
  readonly queueDepth?: (service: string) => Promise<QueueDepth | undefined>;
}

/** `/healthz`, `/readyz` and `/metrics` are public (probes, scrapers); `/services` and `/inflight` sit behind auth. */
export function registerOpsRoutes(app: FastifyInstance, o: OpsRouteOptions): void {
  app.get('/healthz', { config: { public: true } }, async () => ({ status: 'ok', uptimeMs: Date.now() - o.startedAt }));

  app.get('/readyz', { config: { public: true } }, async (_request, reply) => {
    const state = o.connection.state;
    const amqpOk = state.type === 'open';
    const probes = await runProbes(o.probes);
    const ready = amqpOk && probes.every((p) => p.ok || !p.required);
    return reply.code(ready ? 200 : 503).send({
      status: ready ? 'ready' : 'unready',
      rabbitmq: { ok: amqpOk, state: state.type, reconnects: o.connection.reconnects },
      dependencies: probes,
    });
  });

  app.get('/metrics', { config: { public: true } }, async (_request, reply) => {
    const text = await o.metrics.registry.metrics();
    return reply.type(o.metrics.registry.contentType).send(text);
  });

  app.get('/services', async () => {
    const catalogue = o.catalogue.current();
    const queues = await Promise.all(catalogue.services.map((s) => o.queueDepth?.(s.name)));
    return {
      services: catalogue.services.map((s, i) => ({
        name: s.name,
        ...(queues[i] === undefined ? {} : { queue: queues[i] }),
        instances: s.instances.map(summarizeInstance),
        methods: [...catalogue.methods.values()].filter((m) => m.service === s.name).map((m) => ({
          name: m.name,
          ...(m.description === undefined ? {} : { description: m.description }),
          ...(m.tool === undefined ? {} : { tool: m.tool.name ?? m.name }),
        })),
        notifications: s.notifications,
        instanceNotifications: s.instanceNotifications,
      })),
      conflicts: catalogue.conflicts,
    };
  });

  app.get('/inflight', async (_request, reply) => {
    const gateway = o.gate.list();
    if (!o.inflight) {
      return { configured: false, note: 'No in-flight store is configured; only the calls in flight through this gateway are shown.', calls: [], gateway };
    }
    try {
      return { configured: true, calls: await o.inflight.list(), gateway };
    } catch (err) {
      reply.log.warn({ err }, 'in-flight store unavailable');
      return reply.code(503).send({ configured: true, error: 'in-flight store unavailable', calls: [], gateway });
    }
  });
}
