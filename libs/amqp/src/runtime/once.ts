import type { EffectLedger } from '@warren/calls';
import { InvalidParamsError, WorkerLostError, assertNever, type JsonValue } from '@warren/jsonrpc';

export type { EffectLedger, EffectStart } from '@warren/calls';

export interface OnceOptions<T> {
  /**
   * Called instead of `fn` when an earlier run of this call died inside `fn`, so nobody knows whether
   * its effect took place: look it up by `key` in the system `fn` writes to, and return its result
   * (stored like `fn`'s), or run the effect again there under the same key. Without it, `ctx.once`
   * throws WorkerLostError (-32005, `data.reason: 'effect_interrupted'`) rather than risk doing it twice.
   */
  readonly recover?: (key: string) => T | Promise<T>;
}

/** A result `ctx.once` can store: JSON, or nothing. */
export type OnceResult = JsonValue | undefined | void;

/** The longest effect name, in characters. */
export const maxEffectName = 200;

/**
 * The idempotency key of effect `name` of call `callId`: unique per call and
 * name (the name is URI-encoded, so it holds no '/', and the key splits at the last one).
 */
export function effectKey(callId: string, name: string): string {
  return `${callId}/${encodeURIComponent(name)}`;
}

/** The effects of one run of a call, behind `ctx.once`. */
export class Effects {
  /** One promise per name: a second `once` of the same name within this run gets the first's result. */
  private readonly memo = new Map<string, Promise<OnceResult>>();

  constructor(private readonly callId: string, private readonly ledger: EffectLedger | undefined) {}

  once<T extends OnceResult>(name: string, fn: (key: string) => T | Promise<T>, options?: OnceOptions<T>): Promise<T> {
    if (typeof name !== 'string' || name.length === 0 || name.length > maxEffectName) {
      return Promise.reject(new InvalidParamsError(`ctx.once: the effect name must be 1 to ${maxEffectName} characters`));
    }
    let result = this.memo.get(name);
    if (result === undefined) {
      result = this.run(name, fn, options);
      this.memo.set(name, result);
      // A failed effect may be tried again within the run.
      result.catch(() => this.memo.delete(name));
    }
    return result as Promise<T>;
  }

  private async run<T extends OnceResult>(name: string, fn: (key: string) => T | Promise<T>, options: OnceOptions<T> | undefined): Promise<T> {
    const key = effectKey(this.callId, name);
    const ledger = this.ledger;
    // Untracked (no Redis, or Redis down): nothing to remember across runs, so every run runs it.
    if (!ledger) return fn(key);
    const start = await ledger.start(name);
    let result: T;
    switch (start.kind) {
      case 'done':
        return (start.json === '' ? undefined : JSON.parse(start.json)) as T;
      case 'interrupted':
        if (!options?.recover) throw new WorkerLostError('a worker died inside this effect; whether it took place is unknown', { reason: 'effect_interrupted', effect: name, key });
        result = await options.recover(key);
        break;
      case 'run':
        try {
          result = await fn(key);
        } catch (err) {
          await ledger.forget(name).catch(() => undefined);
          throw err;
        }
        break;
      default:
        return assertNever(start, 'effect start');
    }
    await ledger.complete(name, result === undefined ? '' : JSON.stringify(result));
    return result;
  }
}
