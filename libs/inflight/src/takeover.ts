import { ErrorCode } from '@warren/jsonrpc';

/**
 * When a suspect (a call whose worker died while running it) is taken over in the crowd, and when only
 * alone in the worker's suspect lane. The one rule, shared by the claim script (scripts.ts, through
 * {@link takeoverRuleLua}), the memory store and the tracker, and unit-tested on its own.
 *
 * Why it is exact. A crash charges an attempt to every call that was running on the dead worker. A call
 * is dead-lettered only when a run at its last allowed attempt (`maxAttempts`) dies. That run is always
 * made alone (see {@link takeoverAlone}), with nothing else running on its worker, so the crash that ends
 * it is its own: a poison call, or a kill from outside during that very run. An innocent call that shared
 * every earlier crash with a poison call reaches its last attempt alone and finishes there.
 *
 * Why it is fast. Most crashes are not poison: an out-of-memory kill, a deploy, a lost machine. The calls
 * such a crash interrupts are each in their first crash, so they are taken over in the crowd, in
 * parallel, beside new work, as soon as their lease has run out. Only a call seen in a second crash (or at
 * its last attempt) runs alone, and only those hold new work back on the one worker that runs them.
 *
 * What a poison call costs: it crashes a crowd at most {@link crowdTakeovers} + 1 times (its first run,
 * and its one crowd takeover), then its lone runs crash only it, until it is dead-lettered.
 */

/**
 * How many takeovers of one call may run in the crowd: its first. The second takeover runs alone, and
 * so does a takeover at the call's last allowed attempt whatever came before (with `maxAttempts` 2, every
 * takeover), so a call is never dead-lettered for a crash it only stood beside.
 */
export const crowdTakeovers = 1;

/**
 * Whether the takeover that would run as attempt `next` must run alone in the suspect lane (a claim made
 * in isolation), rather than in the crowd (any claim). Attempts count runs that started, so a retried or
 * requeued call is counted as conservatively as one whose worker died.
 *
 * @example
 * takeoverAlone(2, 3); // false: a call's first crash; taken over beside other work
 * takeoverAlone(3, 3); // true: its second crash, and its last attempt
 * takeoverAlone(2, 2); // true: its last attempt
 */
export function takeoverAlone(next: number, maxAttempts: number): boolean {
  return next > 1 + crowdTakeovers || next >= maxAttempts;
}

/** The same rule in Lua, for the claim script: `next` is the attempt the takeover would run as, `maxAttempts` the script's. */
export const takeoverRuleLua = `local function takeoverAlone(next) return next > ${1 + crowdTakeovers} or next >= maxAttempts end`;

/**
 * A takeover with less than `minMs` left before the caller's deadline is not started: the call is recorded
 * `expired` (code -32001) and answered DeadlineExceeded at once, rather than run for a few hundred
 * milliseconds and aborted at the deadline, or held in a suspect lane until then.
 *
 * @example
 * tooLateToTakeOver(Date.now() + 300, Date.now(), 1000); // true
 */
export function tooLateToTakeOver(deadline: number, now: number, minMs: number): boolean {
  return deadline - now < minMs;
}

/** The code a call recorded expired by a refused takeover carries. */
export const lateTakeoverCode = ErrorCode.DeadlineExceeded;

/** What a claim asks for, as its mode letter in the claim script: `r` {@link ClaimModeArgs.running}, `l` late, `1` alone, `0` none. */
export type ClaimMode = 'r' | 'l' | '1' | '0';

export interface ClaimModeArgs {
  /** Made alone in the suspect lane. */
  readonly takeover: boolean;
  /** Its handler runs already (a first delivery): it never meets a suspect, so lateness does not apply. */
  readonly running?: boolean;
  /** Too little time is left for a takeover to start ({@link tooLateToTakeOver}). */
  readonly late?: boolean;
}

/** The claim script's mode for a claim (the memory store reads the same letter, so both decide alike). */
export function claimMode(a: ClaimModeArgs): ClaimMode {
  if (a.running === true && !a.takeover) return 'r';
  if (a.late === true) return 'l';
  return a.takeover ? '1' : '0';
}
