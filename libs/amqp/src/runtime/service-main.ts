import { createLogger, type Logger } from '@warren/logger';
import { startOpsServer, type OpsServer } from './ops-server';
import type { OpsEnv } from './service-env';
import { shutdownHandler } from './shutdown';
import { drainedExitCode, watchSupervisor } from './supervisor-watch';
import { startWatchdog, type Watchdog } from './watchdog';
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
   * Listening before `start` runs (alive, not ready), closed after the service. A port already
   * taken (EADDRINUSE) is logged and the service runs on without it. @default off
   */
  readonly ops?: OpsEnv | undefined;
  /**
   * The last-resort thread (watchdog.ts) that SIGKILLs this process once a shutdown has run
   * `shutdownTimeoutMs` plus `marginMs`, or once the supervisor is gone (with `supervisor`) and the
   * process is still there that long after: a main thread stuck for good cannot end itself. It stays
   * armed after this function resolves, so the main's own exit path (a trace flush) is covered too.
   * Needs `shutdownTimeoutMs`. @default on with the real `process`, off with a fake one (tests)
   */
  readonly watchdog?: false | { readonly marginMs?: number };
}

/** Starts the ops port, or says why the service runs without one (a port taken is no reason to stop). */
async function listenOps(options: ServiceMainOptions, log: Logger, metrics: WorkerMetrics, ready: () => boolean): Promise<OpsServer | undefined> {
  if (!options.ops) return undefined;
  const registry = metrics.registry;
  try {
    const ops = await startOpsServer({
      ...options.ops,
      name: options.name,
      ready,
      routes: { '/metrics': async () => ({ status: 200, body: await registry.metrics(), contentType: registry.contentType }) },
    });
    log.info({ url: ops.url, routes: ['/healthz', '/readyz', '/metrics'] }, 'ops endpoint listening');
    return ops;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
    log.warn({ port: options.ops.port, host: options.ops.host }, 'ops port already taken; running on without /healthz, /readyz and /metrics');
    return undefined;
  }
}

/** The watchdog this main runs, if any (see {@link ServiceMainOptions.watchdog}). */
function watchdogFor(options: ServiceMainOptions): Watchdog | undefined {
  const wanted = options.watchdog ?? (options.process === undefined ? {} : false);
  if (wanted === false || options.shutdownTimeoutMs === undefined) return undefined;
  return startWatchdog({ name: options.name, shutdownTimeoutMs: options.shutdownTimeoutMs, watchParent: options.supervisor !== undefined, ...(wanted.marginMs === undefined ? {} : { marginMs: wanted.marginMs }) });
}

/**
 * The skeleton every service main shares: build the logger, start, close
 * gracefully on the first SIGTERM/SIGINT (a second one, more than a second
 * later, ends it at once: shutdown.ts) or when its `supervisor` is gone, with a
 * watchdog thread that ends the process should its main thread block for good.
 * Resolves the exit code (1 if starting failed, with one line on stderr;
 * then the shutdown's; `drainedExitCode` for a clean shutdown after an operator's
 * drain when a `supervisor` is watched) and never exits: only the outermost main does, so
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
  let dog: Watchdog | undefined;
  try {
    log = options.logger ?? createLogger({ name: options.name, level: options.logLevel ?? 'info' });
    // First: it must already run when the main thread blocks, whenever that is.
    dog = watchdogFor(options);
    // One registry per process, made here (not at import): the ops port is its only reader.
    const metrics = options.ops ? new WorkerMetrics({ service: options.name }) : undefined;
    // Not ready while starting, while the service says so (reconnecting), and from the first signal on.
    ops = metrics === undefined ? undefined : await listenOps(options, log, metrics, () => !stopping && running !== undefined && (running.ready?.() ?? true));
    running = await options.start(log, { observer: metrics });
    if (metrics && running.metrics) metrics.sample(running.metrics);
  } catch (err) {
    await ops?.close();
    dog?.close();
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
  const watchdog = dog;
  // Every way a shutdown starts goes through here: the watchdog's clock starts with it.
  const begin = (signal: NodeJS.Signals): void => {
    watchdog?.shutdownStarted();
    stop(signal);
  };
  for (const signal of signals) proc.on(signal, begin);
  let drained = false;
  void service.drained?.then(() => {
    if (stop.stopping) return;
    drained = true;
    log.info('drained by an operator; shutting down');
    begin('SIGTERM');
  });
  // Gone during a drain already under way: that drain is bounded by shutdownTimeoutMs; cutting it short would help nothing.
  const watch = options.supervisor === undefined ? undefined : watchSupervisor(options.supervisor, () => {
    if (stop.stopping) return;
    log.warn('supervisor gone (its pipe closed); shutting down');
    begin('SIGHUP');
  });
  const code = await stop.exitCode;
  watch?.close();
  for (const signal of signals) proc.off(signal, begin);
  // A second signal or a timeout ends the shutdown early: the port must not keep the process alive.
  await ops?.close();
  // Its supervisor must not read an operator's drain as a crash (supervisor-watch.ts).
  return code === 0 && drained && options.supervisor !== undefined ? drainedExitCode : code;
}
