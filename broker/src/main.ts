// The broker process: reads the environment, starts the broker, listens, and
// shuts down gracefully on SIGINT/SIGTERM. The only broker file that reads
// process.env or exits.
import { recordAnnounced, shutdownHandler, startWatchdog, watchSupervisor } from '@warren/amqp';
import { envGiven } from '@warren/config';
import { InflightView, RedisDirectory } from '@warren/inflight';
import { createLogger, redactUrl } from '@warren/logger';
import { RedisScheduleStore } from '@warren/schedules';
import { startTracing } from '@warren/tracing-node';
import { startBroker } from './broker';
import { brokerOptionsFromEnv } from './env';
import { inflightWiring } from './inflight-wiring';
import { redisPingProbe } from './redis-probe';
import { schedulesWiring } from './schedules-wiring';

/** A second signal, or a shutdown slower than this, exits at once. */
const shutdownTimeoutMs = 15_000;

/** Traces only when OTEL_TRACES_EXPORTER asks (docs/observability.md); flushed before every exit below. */
const tracing = startTracing(process.env, { serviceName: 'warren-broker' });

async function main(): Promise<void> {
  const { redisUrl, logLevel, keyPrefix, scheduler, ...options } = brokerOptionsFromEnv(process.env);
  const logger = createLogger({ name: 'warren-broker', level: logLevel });
  const supervised = envGiven(process.env, 'WARREN_SUPERVISOR') === 'stdin';
  // The last resort should the main thread block for good (watchdog.ts): SIGKILL once a shutdown, or the
  // supervisor's death, is older than the shutdown's bound plus a margin. Unref'd: it keeps nothing alive.
  const watchdog = startWatchdog({ name: 'warren-broker', shutdownTimeoutMs, watchParent: supervised });
  // With Redis, the broker shows the cluster's in-flight calls (GET /inflight), serves the
  // in-flight view as JSON-RPC (inflight.list/status/cancel/workers, $/cancelRequest), and
  // marks the calls it relays queued until a worker takes them.
  const prefix = keyPrefix ?? options.namespace ?? 'warren';
  const view = redisUrl === undefined ? undefined : new InflightView({ redis: redisUrl, keyPrefix: prefix, logger });
  // Every service the broker hears is recorded in the method directory, so `warren call` can name
  // one whose instances are all gone, even if it does not write the directory itself (docs/protocol.md).
  const directory = redisUrl === undefined ? undefined : new RedisDirectory({ redis: redisUrl, keyPrefix: prefix, logger });
  const redisProbe = redisUrl === undefined ? undefined : redisPingProbe(redisUrl);
  const inflight = view === undefined ? undefined : inflightWiring(view);
  // With Redis, schedules too (docs/scheduling.md): schedule.* methods, and a scheduler unless SCHEDULER=off;
  // every broker's scheduler races for one lease, and the holder fires.
  const scheduleStore = redisUrl === undefined ? undefined : new RedisScheduleStore({ url: redisUrl, keyPrefix: prefix });
  const schedules = scheduleStore === undefined ? undefined : schedulesWiring(scheduleStore, { run: scheduler });
  const serviceMethods = { ...inflight?.options.serviceMethods, ...schedules?.options.serviceMethods };
  const broker = await startBroker({ ...options, logger, probes: redisProbe === undefined ? [] : [redisProbe], ...inflight?.options, ...schedules?.options, serviceMethods });
  inflight?.attach(broker, logger);
  schedules?.attach(broker, logger);
  const recording = directory === undefined ? undefined : recordAnnounced(broker.registry, directory, logger);
  // Installed before listening: a signal while the first discovery round runs still drains.
  const stop = shutdownHandler({ log: logger, close: () => (schedules?.close() ?? Promise.resolve()).then(() => broker.close()).then(async () => { recording?.close(); redisProbe?.close(); await Promise.all([view?.close(), directory?.close(), scheduleStore?.close()]); }), timeoutMs: shutdownTimeoutMs, stoppedMessage: 'broker stopped' });
  const begin = (signal: NodeJS.Signals): void => {
    watchdog.shutdownStarted();
    stop(signal);
  };
  process.on('SIGINT', begin);
  process.on('SIGTERM', begin);
  // Under `npm start`, stdin is the supervisor's pipe: its end means the supervisor is gone (even SIGKILLed), and the
  // broker drains as on SIGTERM rather than serve on as an orphan (supervisor-watch.ts). A drain under way is bounded already.
  if (supervised) {
    const watch = watchSupervisor(process.stdin, () => {
      if (stop.stopping) return;
      logger.warn('supervisor gone (its pipe closed); shutting down');
      begin('SIGHUP');
    });
    void stop.exitCode.then(() => watch.close());
  }
  // The library resolves the exit code; only this main exits.
  void stop.exitCode.then(async (code) => {
    await tracing.shutdown();
    process.exit(code);
  });
  const url = await broker.listen();
  // Listening already (so /readyz can answer "discovering"), but ready only once the first
  // announce-now round is over: the catalogue is complete from this line on.
  await broker.registry.discovered();
  logger.info({ url, amqp: options.urls.map(redactUrl), namespace: options.namespace ?? 'warren', auth: options.auth }, 'broker ready');
}

main().catch((err: unknown) => {
  // The logger may not exist yet (a bad variable); stderr always does.
  console.error('broker failed to start:', err instanceof Error ? err.message : err);
  process.exit(1);
});
