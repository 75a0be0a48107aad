import type { Schedule } from './spec';
import type { ClaimResult, OccurrenceEnd, ScheduleState, ScheduleStore } from './store-port';

/**
 * Schedules in this process's memory, for embedded mode: not durable (a restart forgets every
 * schedule added at run time), one scheduler (the lease is a field). Behaves as the Redis store
 * does for everything else, so the scheduler cannot tell them apart.
 */
export class MemoryScheduleStore implements ScheduleStore {
  readonly durable = false;
  private readonly defs = new Map<string, Schedule>();
  private readonly state = new Map<string, ScheduleState>();
  private readonly occurrences = new Map<string, string>();
  private holder: { token: string; until: number } | undefined;

  constructor(private readonly now: () => number = Date.now) {}

  list(): Promise<Schedule[]> {
    return Promise.resolve([...this.defs.values()].sort((a, b) => a.name.localeCompare(b.name)));
  }

  get(name: string): Promise<Schedule | undefined> {
    return Promise.resolve(this.defs.get(name));
  }

  put(schedule: Schedule, replace: boolean): Promise<boolean> {
    if (!replace && this.defs.has(schedule.name)) return Promise.resolve(false);
    this.defs.set(schedule.name, schedule);
    return Promise.resolve(true);
  }

  remove(name: string): Promise<boolean> {
    this.state.delete(name);
    return Promise.resolve(this.defs.delete(name));
  }

  states(names: readonly string[]): Promise<Map<string, ScheduleState>> {
    return Promise.resolve(new Map(names.map((n) => [n, this.state.get(n) ?? {}])));
  }

  setState(name: string, state: ScheduleState): Promise<void> {
    this.state.set(name, state);
    return Promise.resolve();
  }

  lease(token: string, ttlMs: number): Promise<boolean> {
    const now = this.now();
    if (this.holder !== undefined && this.holder.until > now && this.holder.token !== token) return Promise.resolve(false);
    this.holder = { token, until: now + ttlMs };
    return Promise.resolve(true);
  }

  release(token: string): Promise<void> {
    if (this.holder?.token === token) this.holder = undefined;
    return Promise.resolve();
  }

  claim(name: string, occurrence: number, token: string): Promise<ClaimResult> {
    if (this.holder === undefined || this.holder.token !== token || this.holder.until <= this.now()) return Promise.resolve('not_holder');
    const key = `${name}\u0000${occurrence}`;
    const v = this.occurrences.get(key);
    if (v !== undefined && v !== 'queued' && !v.startsWith('claimed:')) return Promise.resolve('handled');
    this.occurrences.set(key, `claimed:${token}`);
    // Bounded: a long-running embedded system keeps the newest records only (a catch-up never reaches that far back).
    if (this.occurrences.size > 100_000) this.occurrences.delete(this.occurrences.keys().next().value as string);
    return Promise.resolve('claimed');
  }

  end(name: string, occurrence: number, how: OccurrenceEnd): Promise<void> {
    this.occurrences.set(`${name}\u0000${occurrence}`, how);
    return Promise.resolve();
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
