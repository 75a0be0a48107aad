import { createLogger, type Logger } from '@warren/logger';
import { startOpsServer, type OpsServer } from './ops-server';
import type { OpsEnv } from './service-env';
import { shutdownHandler } from './shutdown';
import { watchSupervisor } from './supervisor-watch';
import type { ServiceObserver } from './service-observer';
import { WorkerMetrics, type WorkerMetricsSources } from './worker-metrics';

/** What a started service hands back to the main that runs it. */
export interface RunningService {
  /** Closes everything the service holds, in order (the service first, then its stores). */
  readonly close: () => Promise<void>;
  /** Whether it does its work now (a service: connected and consuming); `/readyz` asks it. @default always, once started */
  readonly ready?: () => boolean;
  /** What `/metrics` samples at scrape time (handlers running, tracking state). @default nothing sampled */
  readonly metrics?: WorkerMetricsSources;
  /**
   * Resolves when an operator drained the service (the broker's `workers.drain`): it has finished its
   * calls and closed, and the main ends as after a signal. @default never
   */
  readonly drained?: Promise<void>;
}

/** What runServiceMain hands the service it starts. */
export interface StartHooks {
  /** Pass to the service's `observer` option: `/metrics` counts what it is told. Undefined when the ops port is off. */
  readonly observer: ServiceObserver | undefined;
}

/** Where signals come from and errors go; `process` in a real main, a fake in tests. */
export interface MainProcess {
  on(signal: NodeJS.Signals, listener: (signal: NodeJS.Signals) => void): unknown;
  off(signal: NodeJS.Signals, listener: (signal: NodeJS.Signals) => void): unknown;
  readonly stderr: { write(text: string): unknown };
}

export interface ServiceMainOptions {
  /** Names the service in the log and in the start-failure line. */
  readonly name: string;
  /** @default 'info' */
  readonly logLevel?: string;
  /** Starts the service with the main's logger; resolves once it is serving. */
  readonly start: (log: Logger, hooks: StartHooks) => Promise<RunningService>;
  /** A shutdown slower than this ends with exit code 1. @default no limit */
  readonly shutdownTimeoutMs?: number;
  /** @default ['SIGTERM', 'SIGINT'] */
  readonly signals?: readonly NodeJS.Signals[];
  /** @default process */
  readonly process?: MainProcess;
  /** @default a pino logger named `name` at `logLevel` */
  readonly logger?: Logger;
  /**
   * The read end of the pipe the supervisor that started this process holds (its stdin, under
   * `npm start`): when it ends, the supervisor is gone (even SIGKILLed) and the service shuts down
   * gracefully as on SIGTERM, so it is never left serving as an orphan (supervisor-watch.ts).
   * @default undefined (not watched)
   */
  readonly supervisor?: NodeJS.ReadableStream;
  /**
   * Where to answer `/healthz`, `/readyz` and `/metrics` (readServiceEnv's `ops`, from `WARREN_OPS_PORT`).
   * Listening before `start` runs (alive, not ready), closed after the service. @default off
   */
  readonly ops?: OpsEnv | undefined;
}

/**
 * The skeleton every service main shares: build the logger, start, close
 * gracefully on the first SIGTERM/SIGINT (a second one ends it at once) or
 * when its `supervisor` is gone.
 * Resolves the exit code (1 if starting failed, with one line on stderr;
 * then the shutdown's) and never exits: only the outermost main does, so
 * it can be run in a test or beside other work.
 *
 * @example
 * void runServiceMain({ name: config.name, logLevel: config.logLevel, start: async (log) => startService({ ...config, logger: log, methods }) })
 *   .then((code) => process.exit(code));
 */
export async function runServiceMain(options: ServiceMainOptions): Promise<number> {
  const proc: MainProcess = options.process ?? process;
  const signals = options.signals ?? ['SIGTERM', 'SIGINT'];
  let running: RunningService | undefined;
  let stopping = false;
  let ops: OpsServer | undefined;
  let log: Logger;
  try {
    log = options.logger ?? createLogger({ name: options.name, level: options.logLevel ?? 'info' });
    // One registry per process, made here (not at import): the ops port is its only reader.
    const metrics = options.ops ? new WorkerMetrics({ service: options.name }) : undefined;
    if (options.ops && metrics) {
      const registry = metrics.registry;
      // Not ready while starting, while the service says so (reconnecting), and from the first signal on.
      ops = await startOpsServer({
        ...options.ops,
        name: options.name,
        ready: () => !stopping && running !== undefined && (running.ready?.() ?? true),
        routes: { '/metrics': async () => ({ status: 200, body: await registry.metrics(), contentType: registry.contentType }) },
      });
      log.info({ url: ops.url, routes: ['/healthz', '/readyz', '/metrics'] }, 'ops endpoint listening');
    }
    running = await options.start(log, { observer: metrics });
    if (metrics && running.metrics) metrics.sample(running.metrics);
  } catch (err) {
    await ops?.close();
    // The logger may not exist yet (a bad setting); stderr always does.
    proc.stderr.write(`${options.name} failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
  const service = running;
  // Graceful shutdown: stop consuming, let running calls finish (unfinished ones are
  // requeued for another instance), close. A second signal ends it at once. The ops
  // port closes last, so a liveness probe does not kill a process that is draining.
  const stop = shutdownHandler({
    log,
    close: async () => {
      stopping = true;
      try {
        await service.close();
      } finally {
        await ops?.close();
      }
    },
    stoppedMessage: 'service stopped',
    ...(options.shutdownTimeoutMs === undefined ? {} : { timeoutMs: options.shutdownTimeoutMs }),
  });
  for (const signal of signals) proc.on(signal, stop);
  void service.drained?.then(() => {
    if (stop.stopping) return;
    log.info('drained by an operator; shutting down');
    stop('SIGTERM');
  });
  // Gone during a drain already under way: that drain is bounded by shutdownTimeoutMs; cutting it short would help nothing.
  const watch = options.supervisor === undefined ? undefined : watchSupervisor(options.supervisor, () => {
    if (stop.stopping) return;
    log.warn('supervisor gone (its pipe closed); shutting down');
    stop('SIGHUP');
  });
  const code = await stop.exitCode;
  watch?.close();
  for (const signal of signals) proc.off(signal, stop);
  // A second signal or a timeout ends the shutdown early: the port must not keep the process alive.
  await ops?.close();
  return code;
}
