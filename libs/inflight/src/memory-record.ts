import { parseClaimReply, recordFields, recordSeparator, type ClaimReply } from './record-codec';
import type { ClaimArgs } from './store-port';
import { claimMode, lateTakeoverCode, takeoverAlone } from './takeover';

/**
 * A call record's fields as the memory store handles them (the record format of record-codec.ts), and
 * the claim script's transition (scripts.ts, `claim`) as a pure function over one record: what it
 * answers, and what it writes. The memory store (memory-store.ts) applies the write; the differential
 * test (test/memory-store.int.test.ts) holds both to the same replies and records.
 */

export type Field = (typeof recordFields)[number];
const index = Object.fromEntries(recordFields.map((name, i) => [name, i])) as Record<Field, number>;
export const at = (f: readonly string[], name: Field): string => f[index[name]] ?? '';
export const put = (f: string[], name: Field, value: string): void => void (f[index[name]] = value);
export const fields = (given: Partial<Record<Field, string>>): string[] => recordFields.map((name) => given[name] ?? '');
export const join = (f: readonly string[]): string => f.join(recordSeparator);

/** The wait before attempt `failed` + 1 under a retry policy, if it ends before the deadline (the claim script's retryWait). */
function retryWait(retry: ClaimArgs['retry'], failed: number, now: number): number | undefined {
  const wait = retry?.delaysMs[failed - 1];
  return retry !== undefined && wait !== undefined && now + wait < retry.deadline ? wait : undefined;
}
export const stateName: Readonly<Record<string, string>> = { R: 'running', Q: 'queued', W: 'retrying', D: 'done', F: 'failed', C: 'cancelled', E: 'expired' };

/** What a claim writes: the record, with a TTL, or keeping the one it has (KEEPTTL). */
export interface ClaimWrite {
  readonly value: string;
  readonly ttlMs: number | 'keep';
}

export interface ClaimStep {
  readonly reply: ClaimReply;
  readonly write?: ClaimWrite;
  /** The attempt the new one replaces, for the call's attempts list (JSON, as the claim script writes it), kept `finishedTtlMs`. */
  readonly past?: string;
}

/** An earlier attempt's entry, as the claim script's `past` writes it. */
function pastAttempt(f: readonly string[], outcome: 'lost' | 'retried' | 'released', now: number): string {
  const int = (v: string): string => (v === '' ? '0' : v);
  return `{"attempt":${int(at(f, 'attempt'))},"worker":${JSON.stringify(at(f, 'worker'))},"startedAt":${int(at(f, 'startedAt'))},"endedAt":${now},"outcome":"${outcome}"}`;
}

/** The claim of one call whose record is `current` (undefined: none), at `now`. */
export function claimTransition(current: string | undefined, a: ClaimArgs, now: number): ClaimStep {
  const fresh = fields({ state: 'R', startedAt: String(now), lease: String(now + a.leaseMs), worker: a.worker, token: a.token, attempt: String(a.attempt), meta: a.meta });
  const f = current?.split(recordSeparator);
  if (f === undefined) return { reply: parseClaimReply(a.attempt), write: { value: join(fresh), ttlMs: a.runningTtlMs } };
  const state = at(f, 'state');
  if (at(f, 'result') !== '' || state === 'D' || state === 'F' || state === 'E') return { reply: parseClaimReply(['stored', at(f, 'result'), at(f, 'code'), stateName[state] ?? state, at(f, 'meta')]) };
  // Cancelled before it was claimed, and its handler started already: the run is recorded, marked cancelled.
  const runsCancelled = (): ClaimStep => {
    put(fresh, 'attempt', String((Number(at(f, 'attempt')) || 0) + 1));
    put(fresh, 'cancel', '1');
    return { reply: parseClaimReply(['cancelled']), write: { value: join(fresh), ttlMs: a.runningTtlMs } };
  };
  if (state === 'C') {
    if (claimMode(a) === 'r') return runsCancelled();
    put(f, 'meta', a.meta);
    return { reply: parseClaimReply(['cancelled']), write: { value: join(f), ttlMs: a.finishedTtlMs } };
  }
  const lease = Number(at(f, 'lease'));
  if (state === 'R' && at(f, 'lease') !== '' && lease > now) return { reply: parseClaimReply(['busy', at(f, 'worker'), lease - now]) };
  // Waited out a delay after its worker was lost: still a suspect.
  const lost = state === 'W' && at(f, 'token') === 'lost';
  put(f, 'lease', '');
  put(f, 'token', '');
  put(f, 'finishedAt', String(now));
  if (at(f, 'cancel') === '1') {
    if (claimMode(a) === 'r') return runsCancelled();
    put(f, 'state', 'C');
    return { reply: parseClaimReply(['cancelled']), write: { value: join(f), ttlMs: a.finishedTtlMs } };
  }
  const next = (Number(at(f, 'attempt')) || 0) + 1;
  if (next > a.maxAttempts) {
    put(f, 'state', 'F');
    put(f, 'code', String(a.workerLostCode));
    return { reply: parseClaimReply(['dead', next - 1, at(f, 'worker')]), write: { value: join(f), ttlMs: a.finishedTtlMs } };
  }
  // Queued, or a retry's next attempt: nobody died, so no previous owner.
  if (state !== 'R' && !lost) {
    put(fresh, 'attempt', String(next));
    const ran = (Number(at(f, 'attempt')) || 0) > 0 && at(f, 'worker') !== '';
    return { reply: parseClaimReply(['run', next, '']), write: { value: join(fresh), ttlMs: a.runningTtlMs }, ...(ran ? { past: pastAttempt(f, state === 'W' ? 'retried' : 'released', now) } : {}) };
  }
  if (claimMode(a) === 'l') {
    put(f, 'state', 'E');
    put(f, 'code', String(lateTakeoverCode));
    return { reply: parseClaimReply(['stored', '', at(f, 'code'), 'expired', at(f, 'meta')]), write: { value: join(f), ttlMs: a.finishedTtlMs } };
  }
  const wait = state === 'R' ? retryWait(a.retry, next - 1, now) : undefined;
  if (wait !== undefined) {
    const past = pastAttempt(f, 'lost', now);
    put(f, 'state', 'W');
    put(f, 'lease', String(now + wait));
    put(f, 'token', 'lost');
    put(f, 'finishedAt', '');
    return { reply: parseClaimReply(['retry', next, wait, now + wait, at(f, 'worker')]), write: { value: join(f), ttlMs: 'keep' }, past };
  }
  if (claimMode(a) !== '1' && takeoverAlone(next, a.maxAttempts)) return { reply: parseClaimReply(['expired', at(f, 'worker'), next - 1]) };
  put(fresh, 'attempt', String(next));
  // Taken over: from a worker lost now (one lost before a retry wait is on the list already).
  return { reply: parseClaimReply(['run', next, at(f, 'worker')]), write: { value: join(fresh), ttlMs: a.runningTtlMs }, ...(state === 'R' ? { past: pastAttempt(f, 'lost', now) } : {}) };
}
