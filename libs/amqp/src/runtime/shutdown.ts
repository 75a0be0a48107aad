import type { Logger } from '@warren/logger';

export interface ShutdownOptions {
  /** Closes what the process runs, in order (stop taking work, let running work finish, close connections). */
  readonly close: () => Promise<void>;
  readonly log: Logger;
  /** A shutdown slower than this ends with exit code 1 at once. @default no limit */
  readonly timeoutMs?: number;
  /** Logged once everything is closed. @default 'stopped' */
  readonly stoppedMessage?: string;
  /**
   * A signal this soon after the first is the same stop, not a second one, and is ignored: one Ctrl-C
   * reaches every process of the terminal's foreground group, and a launcher in that group (tsx's CLI,
   * npm) may relay it to its child again. Only a signal after this window ends the shutdown at once.
   * @default 1000
   */
  readonly repeatWindowMs?: number;
}

/** Default of {@link ShutdownOptions.repeatWindowMs}: above a relay's delay, below a person's second Ctrl-C. */
export const defaultRepeatWindowMs = 1000;

/** The signal handler, and the exit code the process should end with once it has run. */
export interface ShutdownHandler {
  (signal: NodeJS.Signals): void;
  /**
   * Resolves once shutdown is over: 0 when closed, 1 if closing failed, took
   * longer than `timeoutMs`, or a second signal came. Never rejects.
   */
  readonly exitCode: Promise<number>;
  /** Whether a signal already started the shutdown (a second one, after `repeatWindowMs`, would end it at once). */
  readonly stopping: boolean;
}

/**
 * The handler a runnable main installs for SIGTERM and SIGINT (the main
 * installs it: libraries never touch signals, nor exit). The first signal
 * closes gracefully; `exitCode` says how that went, and the main exits with
 * it (only the outermost main calls `process.exit`). A signal within
 * `repeatWindowMs` of the first is the same stop (ignored); a later one ends
 * the shutdown at once with exit code 1.
 *
 * @example
 * const stop = shutdownHandler({ log, close: () => service.close() });
 * process.on('SIGTERM', stop);
 * process.on('SIGINT', stop);
 * void stop.exitCode.then((code) => process.exit(code));
 */
export function shutdownHandler(options: ShutdownOptions): ShutdownHandler {
  const { close, log } = options;
  let finish: (code: number) => void = () => undefined;
  const exitCode = new Promise<number>((resolve) => (finish = resolve));
  let stopping = false;
  let timer: NodeJS.Timeout | undefined;
  let firstAt = 0;
  const repeatWindowMs = options.repeatWindowMs ?? defaultRepeatWindowMs;
  // The first outcome wins; later ones (a close that ends after the timeout) change nothing.
  const end = (code: number): void => {
    if (timer) clearTimeout(timer);
    finish(code);
  };
  const handler = (signal: NodeJS.Signals): void => {
    if (stopping) {
      if (Date.now() - firstAt < repeatWindowMs) {
        log.debug({ signal, repeatWindowMs }, 'the same stop delivered again; draining on');
        return;
      }
      log.warn({ signal }, 'second signal; exiting now');
      return end(1);
    }
    stopping = true;
    firstAt = Date.now();
    log.info({ signal }, 'shutting down');
    if (options.timeoutMs !== undefined) {
      const timeoutMs = options.timeoutMs;
      timer = setTimeout(() => {
        log.error({ timeoutMs }, 'shutdown took too long; exiting');
        end(1);
      }, timeoutMs);
      timer.unref();
    }
    close().then(
      () => {
        log.info(options.stoppedMessage ?? 'stopped');
        end(0);
      },
      (err: unknown) => {
        log.error({ err }, 'shutdown failed');
        end(1);
      },
    );
  };
  return Object.defineProperties(Object.assign(handler, { exitCode }), { stopping: { get: () => stopping, enumerable: true } }) as ShutdownHandler;
}
