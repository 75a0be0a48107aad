export interface BackoffOptions {
  /** First delay. @default 100 */
  readonly initialDelayMs?: number;
  /** Ceiling for any delay, jitter included. @default 5000 */
  readonly maxDelayMs?: number;
  /** Growth per attempt. @default 2 */
  readonly factor?: number;
  /** Fraction of the delay randomized, so a fleet that lost the broker together does not return in lockstep. @default 0.3 */
  readonly jitter?: number;
}

export type ResolvedBackoff = Required<BackoffOptions>;

export const defaultBackoff: ResolvedBackoff = { initialDelayMs: 100, maxDelayMs: 5000, factor: 2, jitter: 0.3 };

/** Delay before reconnect attempt `attempt` (1-based): exponential, capped, with jitter below the cap. */
export function backoffDelay(attempt: number, options: ResolvedBackoff, random: () => number = Math.random): number {
  const base = Math.min(options.maxDelayMs, options.initialDelayMs * options.factor ** Math.max(0, attempt - 1));
  const spread = base * options.jitter;
  return Math.max(0, Math.min(options.maxDelayMs, Math.round(base - spread + random() * 2 * spread)));
}
