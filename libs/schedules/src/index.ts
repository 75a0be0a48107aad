/**
 * @warren/schedules — periodic calls: a cron expression (croner, IANA time zones) or an interval,
 * with overlap (skip / queue / allow) and catch-up (none / last / all up to N) policies; exactly
 * one scheduler fires each occurrence, whatever the number running (a Redis lease and
 * per-occurrence keys). See README.md and docs/scheduling.md.
 */
export { parseSchedule, scheduleInputSchema, minEveryMs, type Schedule, type ScheduleInput, type Timing, type OverlapPolicy, type CatchUp, type Parsed } from './spec';
export { nextOccurrence, occurrencesBetween } from './occurrences';
export { planOccurrences, type Plan } from './plan';
export type { ScheduleStore, ScheduleState, LastRun, ClaimResult, OccurrenceEnd } from './store-port';
export { RedisScheduleStore, type RedisScheduleStoreOptions } from './redis-store';
export { MemoryScheduleStore } from './memory-store';
export { scheduleKeys, type ScheduleKeys } from './keys';
export { Scheduler, schedulerDefaults, type SchedulerOptions, type SchedulerState } from './scheduler';
export type { ScheduleCounts } from './counts';
export type { Fired, RunEnd } from './fire';
export { ScheduleControl, type ScheduleEntry, type ControlRefusal, type ControlResult, type AddOptions } from './control';
export { checkTarget, type ServedMethods, type TargetRefusal } from './target-check';
export { scheduleMethods } from './methods';
export { ServiceScheduleSync, serviceSource, serviceScheduleResyncMs, type AnnouncedInstances } from './service-schedules';
