// The audit service: a notification subscriber. Every notification it
// subscribes to is recorded in Redis (a capped list with a TTL) and logged;
// `<SERVICE_NAME>.recent` reads the record back.
//
// Fanout: run it a second time under another SERVICE_NAME (docker-compose runs
// `audit` and `notifier`): each service has its own event queue, so each gets
// every notification; instances of one service share theirs.
import { positiveIntFromEnv, readServiceEnv, runServiceMain, startService } from '@warren/amqp';
import { RedisEventLog } from '@warren/eventlog';
import { redactUrl, type Logger } from '@warren/logger';
import { auditMethods, auditNotifications } from './methods';

const env = readServiceEnv(process.env, { name: 'audit', prefetch: 32 });
const config = {
  ...env,
  redisUrl: env.redisUrl ?? 'redis://127.0.0.1:6379',
  /** Most entries kept per service. */
  maxEntries: positiveIntFromEnv(process.env, 'AUDIT_MAX_ENTRIES', 1000),
  /** How long the record lives after the last notification. */
  ttlMs: positiveIntFromEnv(process.env, 'AUDIT_TTL_MS', 86_400_000),
};

async function start(log: Logger): Promise<{ close: () => Promise<void> }> {
  const store = new RedisEventLog({ url: config.redisUrl, keyPrefix: config.keyPrefix, maxEntries: config.maxEntries, ttlMs: config.ttlMs });
  const audit = { store, stream: `${config.namespace}.${config.name}` };
  const service = await startService({
    urls: config.amqpUrls,
    namespace: config.namespace,
    name: config.name,
    prefetch: config.prefetch,
    notifications: auditNotifications(audit),
    methods: auditMethods(config.name, audit),
    metadata: { description: 'Records notifications to Redis', version: '0.1.0' },
    logger: log,
    ...(config.instanceId === undefined ? {} : { instanceId: config.instanceId }),
  });
  log.info({ amqp: config.amqpUrls.map(redactUrl), redis: redactUrl(config.redisUrl), namespace: config.namespace, instanceId: service.instanceId }, 'service ready');

  return { close: () => service.close().then(() => store.close()) };
}

// runServiceMain owns SIGTERM/SIGINT and the graceful close; it resolves the exit code and only this line exits.
void runServiceMain({ name: config.name, logLevel: config.logLevel, start }).then((code) => process.exit(code));
