import type { EffectStart } from '@warren/calls';

/**
 * What `ctx.once` keeps in Redis: per call, one hash (see keys.ts) whose
 * fields are effect names and whose values are one letter and a payload:
 * `P<token>` started by the run holding that claim token, `D<json>` done,
 * with its result ('' for undefined). The scripts are in once-scripts.ts; the
 * replies are read here, without I/O.
 */

/** The start mark of the run holding claim `token`. */
export function effectMark(token: string): string {
  return `P${token}`;
}

/** The effect-start script's reply: 'R' this run runs it, 'P' an earlier run died inside it, 'D<json>' done. */
export function parseEffectStart(raw: unknown): EffectStart {
  if (raw === 'R') return { kind: 'run' };
  if (typeof raw === 'string' && raw.startsWith('D')) return { kind: 'done', json: raw.slice(1) };
  // 'P', or anything unreadable: nobody can tell whether the effect happened, so it is not run again.
  return { kind: 'interrupted' };
}
