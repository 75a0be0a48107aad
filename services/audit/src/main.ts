// The audit service: a notification subscriber. Every notification it
// subscribes to is recorded in Redis (a capped list with a TTL) and logged;
// `<SERVICE_NAME>.recent` reads the record back.
//
// Fanout: run it a second time under another SERVICE_NAME (docker-compose runs
// `audit` and `notifier`): each service has its own event queue, so each gets
// every notification; instances of one service share theirs.
import { asUser, readMainSettings, readServiceEnv, runServiceMain, startService, type RunningService, type StartHooks } from '@warren/amqp';
import { RedisEventLog } from '@warren/eventlog';
import { redactUrl, type Logger } from '@warren/logger';
import { startTracing } from '@warren/tracing-node';
import { auditDefaults, auditService, auditSettings } from './service';

const settings = readMainSettings(auditDefaults.name, () => {
  const env = readServiceEnv(process.env, auditDefaults);
  return { ...env, redisUrl: env.redisUrl ?? 'redis://127.0.0.1:6379', ...auditSettings(process.env) };
});
if (!settings.ok) {
  // A variable that does not parse: one line naming it, no stack (the broker's way).
  process.stderr.write(settings.line);
  process.exit(1);
}
const config = settings.value;

async function start(log: Logger, { observer }: StartHooks): Promise<RunningService> {
  const store = new RedisEventLog({ url: config.redisUrl, keyPrefix: config.keyPrefix, maxEntries: config.maxEntries, ttlMs: config.ttlMs });
  // What the service is lives in service.ts (embedded mode starts the same one in memory); here, only where it connects.
  const service = await startService({ urls: config.amqpUrls, ...asUser(auditService(config, { logger: log, store }), config.userId), ...(observer === undefined ? {} : { observer }) });
  log.info({ amqp: config.amqpUrls.map(redactUrl), redis: redactUrl(config.redisUrl), namespace: config.namespace, instanceId: service.instanceId }, 'service ready');

  return { ready: () => service.ready, drained: service.worker.drained, metrics: { running: () => service.stats().running, tracking: () => undefined }, close: () => service.close().then(() => store.close()) };
}

// runServiceMain owns SIGTERM/SIGINT and the graceful close; it resolves the exit code and only this line exits.
// Traces only when OTEL_TRACES_EXPORTER asks (docs/observability.md); flushed before the exit below.
const tracing = startTracing(process.env, { serviceName: config.name });
void runServiceMain({ name: config.name, logLevel: config.logLevel, ops: config.ops, start, shutdownTimeoutMs: config.shutdownTimeoutMs, ...(config.supervised ? { supervisor: process.stdin } : {}) }).then(async (code) => {
  await tracing.shutdown();
  process.exit(code);
});
