import type { InstanceInfo, ScheduleDeclaration } from '@warren/amqp';
import { silentLogger, type Logger } from '@warren/logger';
import { parseSchedule, type Schedule } from './spec';
import type { ScheduleStore } from './store-port';

/** How often every service's schedules are written again even if no announcement changed (heals a `schedule.remove` or a lost store). @default 60000 */
export const serviceScheduleResyncMs = 60_000;

/** The source a schedule defined in code by `service` is stored with. */
export const serviceSource = (service: string): string => `service:${service}`;

/** What the sync reads of a registry (`ServiceRegistry` in @warren/amqp): its live instances, and when they change. */
export interface AnnouncedInstances {
  list(): readonly InstanceInfo[];
  on(event: 'change', listener: () => void): unknown;
  off(event: 'change', listener: () => void): unknown;
}

/**
 * Keeps the schedules services define in code (announced with their methods) in the store.
 * For each service, its newest instance's list is the truth: a new name is added; a changed
 * definition replaces the stored one, keeping its `paused` state; a name it no longer announces
 * is removed. A service that stops announcing altogether leaves its schedules as they are (a
 * restart or an outage must not lose an operator's pause). A name already used by another source
 * (a run-time schedule, another service) is never overwritten: it is refused and logged.
 */
export class ServiceScheduleSync {
  /** What was written for each service last (the JSON of its list), so unchanged announcements cost nothing. */
  private readonly synced = new Map<string, string>();
  /** Refusals logged, so one conflict is one log line per definition, not one a minute. */
  private readonly refused = new Set<string>();
  private readonly log: Logger;
  private timer: NodeJS.Timeout | undefined;
  private chain: Promise<void> = Promise.resolve();
  private queued = false;
  private readonly onChange = (): void => this.request();

  constructor(
    private readonly store: ScheduleStore,
    private readonly registry: AnnouncedInstances,
    logger: Logger = silentLogger(),
    private readonly resyncMs = serviceScheduleResyncMs,
  ) {
    this.log = logger.child({ component: 'service-schedules' });
  }

  start(): void {
    this.registry.on('change', this.onChange);
    this.timer = setInterval(() => {
      this.synced.clear();
      this.request();
    }, this.resyncMs);
    this.timer.unref();
    this.request();
  }

  /** Stops following the registry and waits for a write under way. */
  async close(): Promise<void> {
    this.registry.off('change', this.onChange);
    clearInterval(this.timer);
    await this.chain;
  }

  /** Resolves once every change seen so far is written (tests, and close). */
  idle(): Promise<void> {
    return this.chain;
  }

  /** One pass at a time; changes during a pass make one more pass, however many they are. */
  private request(): void {
    if (this.queued) return;
    this.queued = true;
    this.chain = this.chain.then(async () => {
      this.queued = false;
      await this.syncAll();
    });
  }

  private async syncAll(): Promise<void> {
    for (const [service, declared] of newestLists(this.registry.list())) {
      const key = JSON.stringify(declared);
      if (this.synced.get(service) === key) continue;
      try {
        await this.syncService(service, declared);
        this.synced.set(service, key);
      } catch (err) {
        this.log.warn({ err, service }, 'schedules defined by the service not stored; trying again at its next announcement');
      }
    }
  }

  private async syncService(service: string, declared: readonly ScheduleDeclaration[]): Promise<void> {
    const source = serviceSource(service);
    const now = Date.now();
    const stored = new Map((await this.store.list()).map((s) => [s.name, s]));
    for (const d of declared) {
      const parsed = parseSchedule(d, now, source);
      if (!parsed.ok) {
        this.refuse(`${source}/${d.name}/${parsed.field}`, { service, schedule: d.name, field: parsed.field, detail: parsed.reason }, 'schedule defined by the service refused: invalid');
        continue;
      }
      const existing = stored.get(d.name);
      if (existing === undefined) {
        if (await this.store.put(parsed.schedule, false)) this.log.info({ service, schedule: d.name }, 'schedule defined by the service added');
      } else if (existing.source !== source) {
        this.refuse(`${source}/${d.name}/${existing.source}`, { service, schedule: d.name, heldBy: existing.source }, 'schedule defined by the service refused: the name is taken by another source (remove that one to let the service define it)');
      } else if (!sameDefinition(existing, parsed.schedule)) {
        await this.store.put({ ...parsed.schedule, paused: existing.paused }, true);
        // The new timing starts afresh (as schedule.add with replace): nothing of the old one is caught up.
        const { queued: _dropped, ...state } = (await this.store.states([d.name])).get(d.name) ?? {};
        await this.store.setState(d.name, { ...state, lastOccurrence: now });
        this.log.info({ service, schedule: d.name }, 'schedule defined by the service replaced by its new definition');
      }
    }
    const names = new Set(declared.map((d) => d.name));
    for (const s of stored.values()) {
      if (s.source === source && !names.has(s.name) && (await this.store.remove(s.name))) this.log.info({ service, schedule: s.name }, 'schedule no longer defined by the service removed');
    }
  }

  private refuse(key: string, fields: Record<string, unknown>, message: string): void {
    if (this.refused.has(key) || this.refused.size >= 1000) return;
    this.refused.add(key);
    this.log.warn(fields, message);
  }
}

/** Each live service's declared schedules, from its newest instance (the one that describes it). */
function newestLists(instances: readonly InstanceInfo[]): Map<string, readonly ScheduleDeclaration[]> {
  const newest = new Map<string, InstanceInfo>();
  for (const i of instances) {
    const seen = newest.get(i.service);
    if (seen === undefined || i.startedAt > seen.startedAt) newest.set(i.service, i);
  }
  return new Map([...newest].map(([service, i]) => [service, i.schedules ?? []]));
}

/** Whether two schedules fire the same calls at the same times (an interval's anchor, pause and creation aside). */
function sameDefinition(a: Schedule, b: Schedule): boolean {
  const shape = (s: Schedule): string =>
    JSON.stringify([s.method, s.params ?? null, s.timing.kind === 'cron' ? [s.timing.cron, s.timing.timezone] : s.timing.everyMs, s.overlap, s.catchUp, s.timeoutMs]);
  return shape(a) === shape(b);
}
