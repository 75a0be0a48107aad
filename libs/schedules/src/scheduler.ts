import { randomUUID } from 'node:crypto';
import type { RpcClient } from '@warren/amqp';
import { checkPositiveInts, definedOnly } from '@warren/config';
import { silentLogger, type Logger } from '@warren/logger';
import { Counts, type ScheduleCounts } from './counts';
import { watchFailure } from './failures';
import { fireCall, type Fired } from './fire';
import { nextOccurrence } from './occurrences';
import { planOccurrences } from './plan';
import { recordEnd, startedState } from './record';
import type { Schedule } from './spec';
import type { OccurrenceEnd, ScheduleState, ScheduleStore } from './store-port';

export interface SchedulerOptions {
  readonly store: ScheduleStore;
  /** Fires the calls: the normal client (tracked when tracking is on). Not closed by the scheduler. */
  readonly client: RpcClient;
  /** How long the lease lasts unrenewed: a dead holder's successor fires within about this. @default 5000 */
  readonly leaseMs?: number;
  /** How late an occurrence may fire and still count as on time; older ones go through the catch-up policy. @default 60000 */
  readonly graceMs?: number;
  /** Longest wait between two looks at the schedules (new ones, pauses, the lease). @default 1000 */
  readonly tickMs?: number;
  /** @default a silent logger */
  readonly logger?: Logger;
}

export const schedulerDefaults = { leaseMs: 5000, graceMs: 60_000, tickMs: 1000 } as const;

/** `idle` before start, `running` (holding the lease or waiting for it), `closed`. */
export type SchedulerState = 'idle' | 'running' | 'closed';

/**
 * Fires schedules: any number of schedulers may run on one store, and exactly one process fires
 * each occurrence. They race for one lease (a Redis key with a TTL, renewed every tick); the
 * holder claims each occurrence under its own key (a script that checks the lease in the same
 * step) before firing it, so a holder that lost its lease cannot fire, and an occurrence claimed
 * by a holder that died before firing is taken over by the next (docs/scheduling.md).
 *
 * @example
 * const scheduler = new Scheduler({ store: new RedisScheduleStore({ url }), client });
 * scheduler.start();
 * // ... later
 * await scheduler.close();
 */
export class Scheduler {
  private readonly token = randomUUID();
  private readonly counts = new Counts();
  private readonly o: Required<Omit<SchedulerOptions, 'store' | 'client' | 'logger'>>;
  private readonly log: Logger;
  private lifecycle: SchedulerState = 'idle';
  private holding = false;
  private loopDone: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  private wake: (() => void) | undefined;
  /** One state write at a time in this process: the tick and the calls' endings read and write the same records. */
  private serial: Promise<unknown> = Promise.resolve();

  constructor(private readonly options: SchedulerOptions) {
    this.o = { ...schedulerDefaults, ...definedOnly({ leaseMs: options.leaseMs, graceMs: options.graceMs, tickMs: options.tickMs }) } as Required<Omit<SchedulerOptions, 'store' | 'client' | 'logger'>>;
    checkPositiveInts('SchedulerOptions', this.o, ['leaseMs', 'graceMs', 'tickMs']);
    if (this.o.tickMs >= this.o.leaseMs) throw new RangeError('SchedulerOptions.tickMs must be shorter than leaseMs (the lease is renewed every tick)');
    this.log = (options.logger ?? silentLogger()).child({ component: 'scheduler' });
  }

  get state(): SchedulerState {
    return this.lifecycle;
  }

  /** Whether this scheduler held the lease at its last tick. */
  get leader(): boolean {
    return this.holding;
  }

  /** Fired, missed and skipped occurrences per schedule since start (this process's share). */
  stats(): Map<string, ScheduleCounts> {
    return this.counts.snapshot();
  }

  /** Counts a run-now fired elsewhere in this process (the broker's `schedule.runNow`) and watches how it ends, so /metrics and the log show it. */
  firedNow(schedule: Schedule, fired: Fired): void {
    this.counts.add(schedule.name, 'fired');
    watchFailure(fired, schedule, { log: this.log, counts: this.counts });
  }

  start(): void {
    if (this.lifecycle !== 'idle') return;
    this.lifecycle = 'running';
    this.loopDone = this.loop();
  }

  /** Stops ticking and gives the lease up (the next scheduler takes over at once). Calls already fired run on. Idempotent. */
  async close(): Promise<void> {
    if (this.lifecycle === 'closed') return;
    const was = this.lifecycle;
    this.lifecycle = 'closed';
    clearTimeout(this.timer);
    this.wake?.();
    await this.loopDone;
    await this.serial.catch(() => undefined);
    if (was === 'running') await this.options.store.release(this.token).catch(() => undefined);
    this.holding = false;
  }

  private async loop(): Promise<void> {
    while (this.lifecycle === 'running') {
      let delay: number = this.o.tickMs;
      try {
        delay = await this.tick();
      } catch (err) {
        this.holding = false;
        this.log.warn({ err }, 'scheduler tick failed; trying again');
      }
      if (this.lifecycle !== 'running') return;
      await new Promise<void>((resolve) => {
        this.wake = resolve;
        this.timer = setTimeout(resolve, delay);
      });
      this.wake = undefined;
    }
  }

  /** One look at every schedule; resolves with how long to wait before the next. */
  private async tick(): Promise<number> {
    const { store } = this.options;
    const wasHolding = this.holding;
    this.holding = await store.lease(this.token, this.o.leaseMs);
    if (this.holding !== wasHolding) this.log.info({ leader: this.holding }, this.holding ? 'scheduler took the lease' : 'scheduler lost the lease');
    if (!this.holding) return this.o.tickMs;
    const start = Date.now();
    let next = start + this.o.tickMs;
    for (const schedule of await store.list()) {
      if (schedule.paused || this.lifecycle !== 'running') continue;
      if (!(await this.advance(schedule))) {
        this.holding = false;
        return this.o.tickMs;
      }
      const due = nextOccurrence(schedule.timing, Date.now());
      if (due !== undefined) next = Math.min(next, due);
    }
    return Math.max(0, next - Date.now());
  }

  /** Handles what one schedule has due; false when the lease turned out to be someone else's. */
  private advance(schedule: Schedule): Promise<boolean> {
    return this.exclusive(async () => {
      const { store, client } = this.options;
      const { name } = schedule;
      let state: ScheduleState = (await store.states([name])).get(name) ?? {};
      const now = Date.now();
      const running = state.running !== undefined && state.running.until > now;
      const plan = planOccurrences(schedule, state, now, this.o.graceMs, running);
      if (plan.through === undefined && plan.fire.length === 0 && plan.skip.length === 0) return true;
      const claimThen = async (t: number, how: OccurrenceEnd): Promise<'done' | 'handled' | 'lost'> => {
        const claim = await store.claim(name, t, this.token);
        if (claim === 'not_holder') return 'lost';
        if (claim === 'handled') return 'handled';
        if (how !== 'fired') await store.end(name, t, how);
        return 'done';
      };
      for (const t of plan.skip) {
        const r = await claimThen(t, 'skipped');
        if (r === 'lost') return false;
        if (r === 'done') this.counts.add(name, 'skipped');
      }
      for (const t of plan.queue) if ((await claimThen(t, 'queued')) === 'lost') return false;
      for (const t of plan.fire) {
        const r = await claimThen(t, 'fired');
        if (r === 'lost') return false;
        if (r === 'handled') continue;
        const fired = fireCall(client, schedule, Date.now);
        await store.end(name, t, 'fired');
        this.counts.add(name, 'fired');
        watchFailure(fired, schedule, { log: this.log, counts: this.counts, occurrence: t });
        state = startedState(state, fired, schedule.timeoutMs, t);
        this.log.debug({ schedule: name, occurrence: new Date(t).toISOString(), callId: fired.callId }, 'schedule fired');
        // Waits for the call outside the lock: the ticks go on meanwhile.
        void fired.ended.then(() => this.exclusive(() => recordEnd(store, name, fired)))
          .catch((err: unknown) => this.log.warn({ err, schedule: name }, 'outcome not recorded'))
          .then(() => this.wake?.());
      }
      this.counts.add(name, 'missed', plan.missed);
      if (plan.missed > 0) this.log.warn({ schedule: name, missed: plan.missed }, 'occurrences missed while no scheduler ran');
      const through = plan.through === undefined ? state.lastOccurrence : Math.max(plan.through, state.lastOccurrence ?? 0);
      const { queued: _old, ...rest } = state;
      await store.setState(name, { ...rest, ...(through === undefined ? {} : { lastOccurrence: through }), ...(plan.queue.length > 0 ? { queued: plan.queue } : {}) });
      return true;
    });
  }

  private exclusive<T>(work: () => Promise<T>): Promise<T> {
    const run = this.serial.then(work, work);
    this.serial = run.catch(() => undefined);
    return run;
  }
}
