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
import { positiveIntFromEnv, readServiceEnv, runServiceMain, startService } from '@warren/amqp';
import { RedisEventLog } from '@warren/eventlog';
import { InflightView, RedisDirectory, createRedisTracker } from '@warren/inflight';
import { redactUrl, type Logger } from '@warren/logger';
import { jobsMethods } from './methods';

const env = readServiceEnv(process.env, { name: 'jobs', prefetch: 1 });
const config = {
  ...env,
  redisUrl: env.redisUrl ?? 'redis://127.0.0.1:6379',
  /** Time one unit of a job's `size` takes. */
  stepMs: positiveIntFromEnv(process.env, 'JOBS_STEP_MS', 1000),
  /** Deliveries of one job that may start it; the next is dead-lettered. */
  maxAttempts: positiveIntFromEnv(process.env, 'JOBS_MAX_ATTEMPTS', 3),
  /** How soon a dead worker's job is taken over by another. */
  leaseMs: positiveIntFromEnv(process.env, 'JOBS_LEASE_MS', 15_000),
  /** Grace given to running jobs on SIGTERM before they are requeued. */
  shutdownGraceMs: positiveIntFromEnv(process.env, 'SHUTDOWN_GRACE_MS', 10_000),
};

async function start(log: Logger): Promise<{ close: () => Promise<void> }> {
  const store = new RedisEventLog({ url: config.redisUrl, keyPrefix: config.keyPrefix });
  const view = new InflightView({ redis: config.redisUrl, keyPrefix: config.keyPrefix, logger: log });
  const tracker = createRedisTracker({
    redis: config.redisUrl,
    keyPrefix: config.keyPrefix,
    maxAttempts: config.maxAttempts,
    leaseMs: config.leaseMs,
    heartbeatMs: Math.max(1, Math.min(1000, Math.floor(config.leaseMs / 3))),
    logger: log,
  });
  const directory = new RedisDirectory({ redis: config.redisUrl, keyPrefix: config.keyPrefix, logger: log });
  const service = await startService({
    urls: config.amqpUrls,
    namespace: config.namespace,
    name: config.name,
    prefetch: config.prefetch,
    queueType: 'quorum',
    durable: true,
    shutdownGraceMs: config.shutdownGraceMs,
    tracker,
    directory,
    methods: jobsMethods({ store, prefix: `${config.namespace}.${config.name}`, stepMs: config.stepMs, status: (callId) => view.status(callId) }),
    client: { persistent: true },
    metadata: { description: 'Long-running report jobs', version: '0.1.0' },
    logger: log,
    ...(config.instanceId === undefined ? {} : { instanceId: config.instanceId }),
  });
  log.info({ amqp: config.amqpUrls.map(redactUrl), redis: redactUrl(config.redisUrl), tracking: tracker.state, namespace: config.namespace, instanceId: service.instanceId }, 'service ready');

  return { close: () => service.close().then(() => Promise.all([store.close(), view.close(), directory.close()])).then(() => undefined) };
}

// runServiceMain owns SIGTERM/SIGINT and the graceful close; it resolves the exit code and only this line exits.
void runServiceMain({ name: config.name, logLevel: config.logLevel, start }).then((code) => process.exit(code));
