/**
 * Job progress: what a handler reports through `ctx.progress(fraction, message?)`, how often it is
 * passed on (throttled per call), and its form on the wire (a message on the caller's reply queue
 * with the call's correlation id and the {@link progressHeader}; docs/protocol.md, "Progress").
 */

import type { Progress } from '@warren/calls';

export type { Progress } from '@warren/calls';

/** Told of a call's progress, as reported (already throttled). */
export type ProgressListener = (progress: Progress) => void;

/**
 * Header on a progress message (value 1), and on a request whose caller wants progress pushed to its
 * reply queue. A worker pushes progress only to callers that asked: a caller that knows nothing of
 * progress never sees a message that is not a response.
 */
export const progressHeader = 'x-warren-progress';

/** Longest progress message kept; longer ones are cut (progress is for humans, not for data). */
export const maxProgressMessageLength = 200;

/** Most progress writes per call: one per this interval, the last one always written. @default 250 */
export const defaultProgressIntervalMs = 250;

/** Checks and normalizes a report: fraction clamped into 0..1, message cut to its bound. */
export function progressOf(fraction: number, message: string | undefined, at: number): Progress {
  if (typeof fraction !== 'number' || Number.isNaN(fraction)) throw new TypeError(`ctx.progress: fraction must be a number in 0..1, got ${String(fraction)}`);
  if (message !== undefined && typeof message !== 'string') throw new TypeError('ctx.progress: message must be a string');
  const clamped = Math.min(1, Math.max(0, fraction));
  return message === undefined ? { fraction: clamped, at } : { fraction: clamped, message: message.slice(0, maxProgressMessageLength), at };
}

/** The body of a progress message. */
export function encodeProgress(p: Progress): Buffer {
  return Buffer.from(JSON.stringify(p));
}

/** Reads a progress message's body; undefined when it is not one (never throws). */
export function decodeProgress(body: Buffer): Progress | undefined {
  try {
    const v = JSON.parse(body.toString('utf8')) as Partial<Progress> | null;
    if (typeof v !== 'object' || v === null || typeof v.fraction !== 'number' || !Number.isFinite(v.fraction) || typeof v.at !== 'number') return undefined;
    return progressOf(v.fraction, typeof v.message === 'string' ? v.message : undefined, v.at);
  } catch {
    return undefined;
  }
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
