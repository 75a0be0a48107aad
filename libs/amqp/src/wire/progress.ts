import { int64 } from './headers';
/**
 * Job progress: what a handler reports through `ctx.progress(fraction, message?)`, how often it is
 * passed on (throttled per call), and its form on the wire (a message on the caller's reply queue
 * with the call's correlation id and the {@link progressHeader}; docs/protocol-jobs.md, "Progress").
 */

import { progressOf, type Progress } from '@warren/calls';

// The report itself and its one reader live with the type, in @warren/calls, so a tracker reads stored progress the same way.
export { decodeProgress, progressOf, type Progress } from '@warren/calls';

/** Told of a call's progress, as reported (already throttled). */
export type ProgressListener = (progress: Progress) => void;

/**
 * Header on a progress message (value 1), and on a request whose caller wants progress pushed to its
 * reply queue. A worker pushes progress only to callers that asked: a caller that knows nothing of
 * progress never sees a message that is not a response.
 */
export const progressHeader = 'x-warren-progress';
/** `x-warren-progress: 1`, as `l` like every integer header Warren writes (docs/protocol.md, "Headers"). */
export const progressFlag = int64(1);
/** The header table of a progress message (one shared object: nothing allocated per report for it). */
export const progressHeaders = { [progressHeader]: progressFlag };

/** Most progress writes per call: one per this interval, the last one always written. @default 250 */
export const defaultProgressIntervalMs = 250;

/** The body of a progress message. */
export function encodeProgress(p: Progress): Buffer {
  return Buffer.from(JSON.stringify(p));
}

/**
 * One call's progress reports, throttled: the first goes out at once, later ones at most once per
 * `intervalMs`, and the last one is always written (by a trailing timer, or by `flush()` when the
 * call ends). Owns at most one timer, cleared by `flush()`.
 */
export class ProgressReporter {
  private lastSentAt = 0;
  private pending: Progress | undefined;
  private timer: NodeJS.Timeout | undefined;
  private done = false;

  constructor(private readonly sink: ProgressListener, private readonly intervalMs = defaultProgressIntervalMs) {}

  report(fraction: number, message?: string): void {
    const p = progressOf(fraction, message, Date.now());
    if (this.done) return;
    const wait = this.lastSentAt + this.intervalMs - p.at;
    if (wait <= 0 && this.timer === undefined) return this.send(p);
    this.pending = p;
    if (this.timer === undefined) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        const last = this.pending;
        this.pending = undefined;
        if (last) this.send(last);
      }, Math.max(0, wait));
      this.timer.unref();
    }
  }

  /** Writes what is held back now and stops: the call has ended. Idempotent. */
  flush(): void {
    if (this.done) return;
    this.done = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    const last = this.pending;
    this.pending = undefined;
    if (last) this.sink(last);
  }

  private send(p: Progress): void {
    this.lastSentAt = p.at;
    this.sink(p);
  }
}
