/** One progress report of a running call (`ctx.progress(fraction, message?)`). */
export interface Progress {
  /** How much is done, 0..1. */
  readonly fraction: number;
  readonly message?: string;
  /** When it was reported, ms since the epoch (the worker's clock). */
  readonly at: number;
}

/** Longest progress message kept; longer ones are cut (progress is for humans, not for data). */
export const maxProgressMessageLength = 200;

/** Checks and normalizes a report: fraction clamped into 0..1, message cut to its bound. */
export function progressOf(fraction: number, message: string | undefined, at: number): Progress {
  if (typeof fraction !== 'number' || Number.isNaN(fraction)) throw new TypeError(`ctx.progress: fraction must be a number in 0..1, got ${String(fraction)}`);
  if (message !== undefined && typeof message !== 'string') throw new TypeError('ctx.progress: message must be a string');
  const clamped = Math.min(1, Math.max(0, fraction));
  return message === undefined ? { fraction: clamped, at } : { fraction: clamped, message: message.slice(0, maxProgressMessageLength), at };
}

/**
 * Reads a progress report as JSON text (a progress message's body, or the copy a tracker stored),
 * normalized like a fresh one ({@link progressOf}: fraction clamped, message cut); undefined when it
 * is not one. Never throws. The one reader of stored and pushed progress alike.
 */
export function decodeProgress(body: Buffer | string): Progress | undefined {
  try {
    const v = JSON.parse(typeof body === 'string' ? body : body.toString('utf8')) as Partial<Progress> | null;
    if (typeof v !== 'object' || v === null || typeof v.fraction !== 'number' || !Number.isFinite(v.fraction) || typeof v.at !== 'number') return undefined;
    return progressOf(v.fraction, typeof v.message === 'string' ? v.message : undefined, v.at);
  } catch {
    return undefined;
  }
}
