/**
 * Every Redis key of the schedules, built here from the key prefix, and the TTL each gets.
 * One hash tag (`{<prefix>:sched}`) puts them in one Redis Cluster slot, since the claim script
 * reads the lease and writes an occurrence in one step.
 *
 *   {warren:sched}:lease                   string: token of the scheduler that fires (TTL: the lease, renewed)
 *   {warren:sched}:defs                    hash: name → schedule (JSON) (TTL: definitionsTtlMs, renewed by the holder)
 *   {warren:sched}:state                   hash: name → state (JSON), last run and overlap (TTL: as defs)
 *   {warren:sched}:occ:<name>:<epoch ms>   string: `claimed:<token>` then fired|skipped|missed|queued (TTL: occurrenceTtlMs)
 */
export interface ScheduleKeys {
  readonly lease: string;
  readonly defs: string;
  readonly state: string;
  occurrence(name: string, at: number): string;
}

const prefixPattern = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$/;

export function scheduleKeys(prefix: string): ScheduleKeys {
  if (!prefixPattern.test(prefix)) throw new RangeError(`keyPrefix must match ${prefixPattern.source}, got ${JSON.stringify(prefix)}`);
  const tag = `{${prefix}:sched}`;
  return {
    lease: `${tag}:lease`,
    defs: `${tag}:defs`,
    state: `${tag}:state`,
    occurrence: (name, at) => `${tag}:occ:${name}:${at}`,
  };
}

/** Definitions and state live long but not for ever: each write and each lease renewal sets this again. @default 400 days */
export const definitionsTtlMs = 400 * 86_400_000;
/** An occurrence's record outlives any catch-up window it could be fired again in. @default 7 days */
export const occurrenceTtlMs = 7 * 86_400_000;
