import type { Abortable } from './abortable';

/**
 * Isolation of suspect calls on one service instance. A suspect is a call
 * whose previous worker died (or stopped renewing its lease) while running
 * it: it may be what killed that worker. A crash is charged, as an attempt,
 * to every call its worker had started, so a suspect the tracker wants alone
 * (in @warren/inflight: from its second crash on, or at its last attempt)
 * runs alone here: one such suspect at a time, once everything else running
 * on this instance has ended, and with new work held back (not claimed, so
 * not charged) until it is done. A crash during its run is then its own.
 *
 * The tracker claims calls through {@link Isolation.enter} and takes a suspect
 * over only inside {@link Isolation.alone}; the runtime counts untracked work
 * (batches, notifications) through `enter` too. While no suspect is here,
 * `enter` is a counter increment and returns `true` synchronously: a healthy
 * instance pays nothing else.
 */
export interface Isolation {
  /**
   * Counts one piece of work as running on this instance. `true` at once while
   * no suspect runs alone; otherwise a promise of `true` once it may start, or
   * `false` if `abort` fired first (then it is not counted, and `leave` must not be called).
   */
  enter(abort: Abortable): true | Promise<boolean>;
  /** Ends one piece of work `enter` counted. */
  leave(): void;
  /**
   * Waits for a suspect's turn to run alone: after the suspects before it, and
   * after every piece of work counted by `enter` has left, holding new work back
   * meanwhile. Resolves with the function that ends its turn (call it once), or
   * `undefined` if `abort` fired first.
   */
  alone(abort: Abortable): Promise<(() => void) | undefined>;
}
