/**
 * The `ctx.once` half of the in-memory store (memory-store.ts): each call's effects, name →
 * `<mark>` (started by that run) or `D<json>` (done), as the effect scripts (once-scripts.ts) keep
 * them in Redis, with a TTL that only grows. Expiry is lazy, with the store's sweep.
 */
export class MemoryEffects {
  private readonly byCall = new Map<string, { readonly value: Map<string, string>; expiresAt: number }>();

  /** 'R' run it | 'D<json>' done | 'P' an earlier run died inside it (once-marks.ts reads it). */
  start(callId: string, name: string, mark: string, ttlMs: number, now = Date.now()): string {
    const hash = this.of(callId, now);
    const v = hash.value.get(name);
    if (v !== undefined) return v.startsWith('D') ? v : v === mark ? 'R' : 'P';
    hash.value.set(name, mark);
    hash.expiresAt = Math.max(hash.expiresAt, now + ttlMs);
    return 'R';
  }

  /** 1 stored | 0 a result was there already (the first wins). */
  complete(callId: string, name: string, json: string, ttlMs: number, now = Date.now()): number {
    const hash = this.of(callId, now);
    if (hash.value.get(name)?.startsWith('D')) return 0;
    hash.value.set(name, `D${json}`);
    hash.expiresAt = Math.max(hash.expiresAt, now + ttlMs);
    return 1;
  }

  /** 1 if this run's start mark was dropped (its `fn` threw). */
  forget(callId: string, name: string, mark: string): number {
    const hash = this.byCall.get(callId);
    if (hash === undefined || hash.value.get(name) !== mark) return 0;
    hash.value.delete(name);
    return 1;
  }

  sweep(now: number): void {
    for (const [key, entry] of this.byCall) if (entry.expiresAt <= now) this.byCall.delete(key);
  }

  private of(callId: string, now: number): { readonly value: Map<string, string>; expiresAt: number } {
    const found = this.byCall.get(callId);
    if (found && found.expiresAt > now) return found;
    const fresh = { value: new Map<string, string>(), expiresAt: now };
    this.byCall.set(callId, fresh);
    return fresh;
  }
}
