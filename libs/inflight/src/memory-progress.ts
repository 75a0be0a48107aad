import { minTtlMs, progressLogEntries } from './keys';

interface Timed<T> {
  readonly value: T;
  readonly expiresAt: number;
}

/**
 * The progress half of the in-memory store (memory-store.ts): each running call's latest progress
 * (keys.ts `progress`) and its progress log (`progressLog`: the last {@link progressLogEntries}
 * reports), each with its own expiry, as the progress script keeps them in Redis. Expiry is lazy, with
 * the store's sweep.
 */
export class MemoryProgress {
  private readonly latest = new Map<string, Timed<string>>();
  private readonly logs = new Map<string, Timed<readonly string[]>>();

  /** What the progress script writes once the claim is checked: the latest for `latestTtlMs`, the log for `logTtlMs`. */
  write(callId: string, json: string, latestTtlMs: number, logTtlMs: number, now: number): void {
    this.latest.set(callId, { value: json, expiresAt: now + Math.max(minTtlMs, latestTtlMs) });
    const log = [...(this.live(this.logs, callId, now) ?? []), json].slice(-progressLogEntries);
    this.logs.set(callId, { value: log, expiresAt: now + Math.max(1, logTtlMs) });
  }

  /** A call's latest progress (JSON), undefined when none lives. */
  latestOf(callId: string, now: number): string | undefined {
    return this.live(this.latest, callId, now);
  }

  /** A call's progress log, oldest first; `[]` when none lives. */
  logOf(callId: string, now: number): string[] {
    return [...(this.live(this.logs, callId, now) ?? [])];
  }

  /** The call waits for its next attempt: its latest progress goes, its log stays (as the retrying script does). */
  dropLatest(callId: string): void {
    this.latest.delete(callId);
  }

  sweep(now: number): void {
    for (const map of [this.latest, this.logs] as Map<string, Timed<unknown>>[]) {
      for (const [key, entry] of map) if (entry.expiresAt <= now) map.delete(key);
    }
  }

  private live<T>(map: Map<string, Timed<T>>, callId: string, now: number): T | undefined {
    const entry = map.get(callId);
    if (entry === undefined) return undefined;
    if (entry.expiresAt > now) return entry.value;
    map.delete(callId);
    return undefined;
  }
}
