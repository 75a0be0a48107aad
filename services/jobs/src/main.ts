// The jobs service: a worker pool for long-running jobs. Run N copies of this
// process; they share one durable quorum queue, each takes PREFETCH jobs at a
// time (1 by default: a job is CPU-bound in real life).
//
// - Durable: the queue survives a RabbitMQ restart; callers send persistent
//   messages (`persistent: true`, `warren call --persistent`).
// - Progress: each step is logged and reported through ctx.progress: stored on
//   the call's in-flight record (inflight.status, GET /inflight, `warren
//   status`), pushed to callers that ask (`warren call --progress`, MCP
//   progress tokens), and read back by `report.progress {callId}` on any instance.
// - A worker killed mid-job: RabbitMQ redelivers the job to another worker;
//   the in-flight tracker (@warren/inflight) lets it take over once the dead
//   worker's lease runs out, and answers a redelivery of a finished job from
//   the stored result, so each job finishes once and the caller gets one answer.
// - A job whose worker dies on every attempt: after JOBS_MAX_ATTEMPTS the
//   tracker answers the caller WorkerLost (-32005) and the request goes to the
//   dead-letter queue `<namespace>.svc.<name>.dead`.
import { asUser, readMainSettings, readServiceEnv, runServiceMain, startService, type RunningService, type StartHooks } from '@warren/amqp';
import { RedisEventLog } from '@warren/eventlog';
import { InflightView, RedisDirectory, createRedisTracker, trackQueued } from '@warren/inflight';
import { redactUrl, type Logger } from '@warren/logger';
import { startTracing } from '@warren/tracing-node';
import { jobsDefaults, jobsService, jobsSettings, jobsTrackerOptions } from './service';

const settings = readMainSettings(jobsDefaults.name, () => {
  const env = readServiceEnv(process.env, jobsDefaults);
  return { ...env, redisUrl: env.redisUrl ?? 'redis://127.0.0.1:6379', ...jobsSettings(process.env) };
});
if (!settings.ok) {
  // A variable that does not parse: one line naming it, no stack (the broker's way).
  process.stderr.write(settings.line);
  process.exit(1);
}
const config = settings.value;

async function start(log: Logger, { observer }: StartHooks): Promise<RunningService> {
  const store = new RedisEventLog({ url: config.redisUrl, keyPrefix: config.keyPrefix });
  const view = new InflightView({ redis: config.redisUrl, keyPrefix: config.keyPrefix, logger: log });
  const tracker = createRedisTracker({ redis: config.redisUrl, ...jobsTrackerOptions(config, log) });
  const directory = new RedisDirectory({ redis: config.redisUrl, keyPrefix: config.keyPrefix, logger: log });
  // What the service is lives in service.ts (embedded mode starts the same one in memory); here, only where it connects.
  const service = await startService({ urls: config.amqpUrls, ...asUser(jobsService(config, { logger: log, store, tracker, status: (callId) => view.status(callId) }), config.userId), directory, ...(observer === undefined ? {} : { observer }) });
  // Its handlers' nested calls read as queued in the in-flight view until a worker takes them.
  const queued = trackQueued(service.client, view, log);
  log.info({ amqp: config.amqpUrls.map(redactUrl), redis: redactUrl(config.redisUrl), tracking: tracker.state, namespace: config.namespace, instanceId: service.instanceId }, 'service ready');

  return { ready: () => service.ready, drained: service.worker.drained, metrics: { running: () => service.stats().running, tracking: () => tracker.report?.() }, close: () => service.close().then(() => queued.flush()).then(() => Promise.all([store.close(), view.close(), directory.close()])).then(() => undefined) };
}

// runServiceMain owns SIGTERM/SIGINT and the graceful close; it resolves the exit code and only this line exits.
// Traces only when OTEL_TRACES_EXPORTER asks (docs/observability.md); flushed before the exit below.
const tracing = startTracing(process.env, { serviceName: config.name });
void runServiceMain({ name: config.name, logLevel: config.logLevel, ops: config.ops, start, shutdownTimeoutMs: config.shutdownTimeoutMs, ...(config.supervised ? { supervisor: process.stdin } : {}) }).then(async (code) => {
  await tracing.shutdown();
  process.exit(code);
});
