// The calculator service, and the template for writing a new one.
//
// A Warren service is two files: methods.ts (handlers of (params, ctx) with a
// JSON Schema each, no I/O of their own, unit-testable) and this main.ts, the
// composition root: the only place that reads the environment, builds the
// logger, starts the service, and turns SIGTERM/SIGINT into a graceful close.
// To write a new service, copy both files, rename, and replace the methods.
//
// Run: AMQP_URL=amqp://guest:guest@127.0.0.1:5672 npx tsx services/calculator/src/main.ts
import { asUser, readMainSettings, readServiceEnv, runServiceMain, startService, type RunningService, type StartHooks } from '@warren/amqp';
import { InflightView, RedisDirectory, createRedisTracker, trackQueued } from '@warren/inflight';
import { redactUrl, type Logger } from '@warren/logger';
import { startTracing } from '@warren/tracing-node';
import { calculatorDefaults, calculatorService } from './service';

/**
 * Every setting, from the environment (docs/services.md has the table). With
 * REDIS_URL set, calls are tracked in Redis, so `warren inflight`, `status`
 * and `cancel` see them.
 */
const settings = readMainSettings(calculatorDefaults.name, () => readServiceEnv(process.env, calculatorDefaults));
if (!settings.ok) {
  // A variable that does not parse: one line naming it, no stack (the broker's way).
  process.stderr.write(settings.line);
  process.exit(1);
}
const config = settings.value;

async function start(log: Logger, { observer }: StartHooks): Promise<RunningService> {
  // Optional: with a tracker, a redelivered call is answered from its stored result instead of running twice.
  const tracker = config.redisUrl === undefined ? undefined : createRedisTracker({ redis: config.redisUrl, keyPrefix: config.keyPrefix, logger: log });
  // With Redis, its methods are recorded there too, so `warren call add 4 5` names calculator when no instance runs.
  const directory = config.redisUrl === undefined ? undefined : new RedisDirectory({ redis: config.redisUrl, keyPrefix: config.keyPrefix, logger: log });
  // What the service is lives in service.ts (embedded mode starts the same one in memory); here, only where it connects.
  const service = await startService({ urls: config.amqpUrls, ...asUser(calculatorService(config, { logger: log, ...(tracker === undefined ? {} : { tracker }) }), config.userId), ...(directory === undefined ? {} : { directory }), ...(observer === undefined ? {} : { observer }) });
  // With Redis, its nested calls (mean → sum) read as queued in the in-flight view (the console's In flight) until a worker takes them.
  const view = config.redisUrl === undefined ? undefined : new InflightView({ redis: config.redisUrl, keyPrefix: config.keyPrefix, logger: log });
  const queued = view === undefined ? undefined : trackQueued(service.client, view, log);
  log.info({ amqp: config.amqpUrls.map(redactUrl), tracking: tracker?.state ?? 'off', namespace: config.namespace, instanceId: service.instanceId }, 'service ready');
  return { ready: () => service.ready, drained: service.worker.drained, metrics: { running: () => service.stats().running, tracking: () => tracker?.report?.() }, close: () => service.close().then(() => queued?.flush()).then(() => Promise.all([directory?.close(), view?.close()])).then(() => undefined) };
}

// runServiceMain owns the logger, SIGTERM/SIGINT and the graceful close (stop consuming, let
// running calls finish, requeue the rest); it resolves the exit code and only this line exits.
// Traces only when OTEL_TRACES_EXPORTER asks (docs/observability.md); flushed before the exit below.
const tracing = startTracing(process.env, { serviceName: config.name });
void runServiceMain({ name: config.name, logLevel: config.logLevel, ops: config.ops, start, shutdownTimeoutMs: config.shutdownTimeoutMs, ...(config.supervised ? { supervisor: process.stdin } : {}) }).then(async (code) => {
  await tracing.shutdown();
  process.exit(code);
});
