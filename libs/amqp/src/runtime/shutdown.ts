import type { Logger } from '@warren/logger';

export interface ShutdownOptions {
  /** Closes what the process runs, in order (stop taking work, let running work finish, close connections). */
  readonly close: () => Promise<void>;
  readonly log: Logger;
  /** A shutdown slower than this exits at once. @default no limit */
  readonly timeoutMs?: number;
  /** Logged once everything is closed. @default 'stopped' */
  readonly stoppedMessage?: string;
}

/**
 * The handler a runnable main installs for SIGTERM and SIGINT (the main
 * installs it: libraries never touch signals). The first signal closes
 * gracefully, then exits 0, or 1 if closing failed or took longer than
 * `timeoutMs`; a second signal exits 1 at once.
 *
 * @example
 * const stop = shutdownHandler({ log, close: () => service.close() });
 * process.on('SIGTERM', stop);
 * process.on('SIGINT', stop);
 */
export function shutdownHandler(options: ShutdownOptions): (signal: NodeJS.Signals) => void {
  const { close, log } = options;
  let stopping = false;
  return (signal) => {
    if (stopping) {
      log.warn({ signal }, 'second signal; exiting now');
      process.exit(1);
      return;
    }
    stopping = true;
    log.info({ signal }, 'shutting down');
    if (options.timeoutMs !== undefined) {
      const timeoutMs = options.timeoutMs;
      setTimeout(() => {
        log.error({ timeoutMs }, 'shutdown took too long; exiting');
        process.exit(1);
      }, timeoutMs).unref();
    }
    close().then(
      () => {
        log.info(options.stoppedMessage ?? 'stopped');
        process.exit(0);
      },
      (err: unknown) => {
        log.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
}
