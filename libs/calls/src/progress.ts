/** One progress report of a running call (`ctx.progress(fraction, message?)`). */
export interface Progress {
  /** How much is done, 0..1. */
  readonly fraction: number;
  readonly message?: string;
  /** When it was reported, ms since the epoch (the worker's clock). */
  readonly at: number;
}
