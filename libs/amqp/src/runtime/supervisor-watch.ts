/**
 * How a child learns that the process that started it is gone, even when it was SIGKILLed and
 * could say nothing: the supervisor holds the write end of a pipe on the child's stdin and never
 * writes to it; when the supervisor dies for any reason the kernel closes that end and the child
 * reads end-of-file. (Polling the parent pid would be slower and racy, and an IPC channel would tie
 * the child to Node; a pipe works from any language.) `npm start` (scripts/start.ts) sets
 * `WARREN_SUPERVISOR=stdin` on the children it starts so; a main started any other way (a shell,
 * systemd, a container) must not read its stdin as a lifeline, which is why it is opt-in.
 */
/**
 * The exit code of a supervised process (`WARREN_SUPERVISOR=stdin`) that an operator drained (the
 * broker's `workers.drain`) and that then shut down cleanly: its supervisor (`npm start`, `warren
 * start`) tells it from a crash and keeps the other processes running, without restarting it. An exit
 * code, not a log line, so it reaches the supervisor whatever LOG_LEVEL hides. A process not
 * supervised so exits 0 instead: 75 would read as a failure to systemd or a container runtime.
 */
export const drainedExitCode = 75;

export interface SupervisorWatch {
  /** Stops watching (the input is left alone); idempotent. */
  readonly close: () => void;
}

/**
 * Calls `onGone` once when `input` ends, closes or fails. Anything written to it is read and ignored.
 *
 * @example
 * const watch = watchSupervisor(process.stdin, () => stop('SIGHUP'));
 * // ... on shutdown:
 * watch.close();
 */
export function watchSupervisor(input: NodeJS.ReadableStream, onGone: () => void): SupervisorWatch {
  let watching = true;
  const gone = (): void => {
    if (!watching) return;
    close();
    onGone();
  };
  const ignore = (): void => undefined;
  const close = (): void => {
    watching = false;
    input.off('end', gone);
    input.off('close', gone);
    input.off('error', gone);
    input.off('data', ignore);
    input.pause();
    // A pipe being read keeps the event loop alive; once nobody listens it must not.
    (input as { unref?: () => void }).unref?.();
  };
  input.on('end', gone);
  input.on('close', gone);
  input.on('error', gone);
  // Flowing mode: end-of-file is only seen by a stream being read.
  input.on('data', ignore);
  return { close };
}
