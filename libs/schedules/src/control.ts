import type { RpcClient } from '@warren/amqp';
import { fireCall, type Fired } from './fire';
import { nextOccurrence } from './occurrences';
import { recordEnd, startedState } from './record';
import { parseSchedule, type Parsed, type Schedule, type ScheduleInput } from './spec';
import { checkTarget, type ServedMethods, type TargetRefusal } from './target-check';
import type { ScheduleState, ScheduleStore } from './store-port';

/** One schedule as `schedule.list` answers it: its definition, what it last did, when it fires next. */
export interface ScheduleEntry extends Schedule {
  readonly state: ScheduleState;
  /** The next occurrence (epoch ms); absent while paused or when the cron never fires again. */
  readonly nextRun?: number;
  /** False in embedded mode: the schedule lives in memory and a restart forgets it. */
  readonly durable: boolean;
}

/** Why a change was refused: names what is wrong; the methods answer it as -32602. */
export type ControlRefusal = { readonly reason: 'no_such_schedule'; readonly name: string } | { readonly reason: 'schedule_exists'; readonly name: string } | { readonly reason: 'invalid_schedule'; readonly field: string; readonly detail: string } | TargetRefusal;

/** How `add` treats what is already there and what it calls. */
export interface AddOptions {
  /** Replace a schedule of the same name. @default false */
  readonly replace?: boolean;
  /** Accept a method no running service serves (nor checks its params). @default false */
  readonly allowUnserved?: boolean;
  /** Where the schedule comes from. @default 'runtime' */
  readonly source?: string;
}

/** What a change gave: done (with a value) or refused. */
export type ControlResult<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly refusal: ControlRefusal };

/**
 * The run-time side of schedules, behind `schedule.*` and the CLI: list, add, remove, pause,
 * resume, run now. Any process may hold one (every broker does); the firing itself is the
 * scheduler's, whichever holds the lease.
 */
export class ScheduleControl {
  constructor(
    private readonly store: ScheduleStore,
    /** The client run-nows go through (a getter: the broker's exists only once it has started). */
    private readonly client: () => RpcClient,
    /** Told of each run-now fired here (the process's counters, and the log line if it fails). @default none */
    private readonly onRunNow: (schedule: Schedule, fired: Fired) => void = () => undefined,
    /** The methods running services serve, which `add` checks the method and params against (target-check.ts). @default no check */
    private readonly served?: ServedMethods,
  ) {}

  async list(): Promise<ScheduleEntry[]> {
    const schedules = await this.store.list();
    const states = await this.store.states(schedules.map((s) => s.name));
    const now = Date.now();
    return schedules.map((s) => {
      const state = states.get(s.name) ?? {};
      const next = s.paused ? undefined : nextOccurrence(s.timing, Math.max(now, state.lastOccurrence ?? 0));
      return { ...s, state, ...(next === undefined ? {} : { nextRun: next }), durable: this.store.durable };
    });
  }

  /**
   * Adds a schedule; an existing name is refused unless `replace`, and (with `served`) a method no
   * running service serves unless `allowUnserved`, or params its params schema refuses.
   */
  async add(input: ScheduleInput, options: AddOptions = {}): Promise<ControlResult<Schedule>> {
    const { replace = false, allowUnserved = false, source = 'runtime' } = options;
    const parsed: Parsed = parseSchedule(input, Date.now(), source);
    if (!parsed.ok) return { ok: false, refusal: { reason: 'invalid_schedule', field: parsed.field, detail: parsed.reason } };
    const target = this.served === undefined ? undefined : checkTarget(input, this.served, allowUnserved);
    if (target !== undefined) return { ok: false, refusal: target };
    const stored = await this.store.put(parsed.schedule, replace);
    if (!stored) return { ok: false, refusal: { reason: 'schedule_exists', name: input.name } };
    // A replaced schedule starts afresh: nothing of the old timing is caught up.
    if (replace) await this.store.setState(parsed.schedule.name, { lastOccurrence: parsed.schedule.createdAt });
    return { ok: true, value: parsed.schedule };
  }

  async remove(name: string): Promise<ControlResult<true>> {
    return (await this.store.remove(name)) ? { ok: true, value: true } : missing(name);
  }

  /** Pauses (no occurrence fires) or resumes; a resumed schedule goes on from now, catching nothing up. */
  async setPaused(name: string, paused: boolean): Promise<ControlResult<Schedule>> {
    const s = await this.store.get(name);
    if (s === undefined) return missing(name);
    const next = { ...s, paused };
    await this.store.put(next, true);
    if (!paused && s.paused) {
      const state = (await this.store.states([name])).get(name) ?? {};
      await this.store.setState(name, { ...state, lastOccurrence: Date.now() });
    }
    return { ok: true, value: next };
  }

  /** Fires the schedule's call now, whatever its timing and pause; the overlap policy does not apply (an operator asked). */
  async runNow(name: string): Promise<ControlResult<{ readonly callId: string }>> {
    const s = await this.store.get(name);
    if (s === undefined) return missing(name);
    const fired: Fired = fireCall(this.client(), s, Date.now);
    this.onRunNow(s, fired);
    const state = (await this.store.states([name])).get(name) ?? {};
    await this.store.setState(name, startedState(state, fired, s.timeoutMs, undefined));
    void recordEnd(this.store, name, fired).catch(() => undefined);
    return { ok: true, value: { callId: fired.callId } };
  }
}

function missing(name: string): { readonly ok: false; readonly refusal: ControlRefusal } {
  return { ok: false, refusal: { reason: 'no_such_schedule', name } };
}
