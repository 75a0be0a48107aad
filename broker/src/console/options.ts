import { checkPositiveInts, resolveOptions } from '@warren/config';

/** What the console (GET /, its assets and its live feed) does; every field has a default. */
export interface ConsoleOptions {
  /** Serve the console at all. @default true */
  readonly enabled?: boolean;
  /** How often the one server-side watcher reads the in-flight store while a browser is connected. @default 1000 */
  readonly pollMs?: number;
  /** Browsers connected to the live feed at once; one more answers 503. @default 32 */
  readonly maxClients?: number;
  /**
   * Bytes a browser may leave unread on its feed before it is dropped (it
   * reconnects and starts from a fresh snapshot), so a slow tab never makes
   * the broker buffer without bound. @default 262144 (256 KiB)
   */
  readonly maxBufferedBytes?: number;
  /**
   * How long a browser's socket may refuse more (no 'drain') before the browser is dropped: one
   * that reads slowly is waited for, one that stopped reading is let go. @default 30000
   */
  readonly stallMs?: number;
  /** Finished calls kept for the Recent outcomes view. @default 500 */
  readonly maxOutcomes?: number;
  /** Minutes of calls/s and p50/p99 kept for the Throughput view. @default 10 */
  readonly throughputMinutes?: number;
  /** Interval of the comment lines that keep proxies from closing an idle feed. @default 15000 */
  readonly keepAliveMs?: number;
}

export type ResolvedConsoleOptions = Required<ConsoleOptions>;

export const consoleDefaults: ResolvedConsoleOptions = {
  enabled: true,
  pollMs: 1000,
  maxClients: 32,
  maxBufferedBytes: 256 * 1024,
  stallMs: 30_000,
  maxOutcomes: 500,
  throughputMinutes: 10,
  keepAliveMs: 15_000,
};

/** Fills in defaults and names the bad field. */
export function resolveConsoleOptions(options: ConsoleOptions = {}): ResolvedConsoleOptions {
  const resolved = resolveOptions(consoleDefaults, options);
  checkPositiveInts('ConsoleOptions', resolved, ['pollMs', 'maxClients', 'maxBufferedBytes', 'stallMs', 'maxOutcomes', 'throughputMinutes', 'keepAliveMs']);
  return resolved;
}
