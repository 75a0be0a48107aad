import { RpcPendingLimitError } from './local-errors';

export interface PendingCallsOptions<K> {
  /** Most calls waiting at once; past it `add` rejects with RpcPendingLimitError. @default 10000 */
  readonly maxPending?: number;
  /** The error a call settles with when its time runs out. */
  readonly timeoutError: (key: K) => Error;
  /** The error a call settles with when its signal aborts. */
  readonly abortError: (key: K, reason: unknown) => Error;
}

export interface AddOptions<K = unknown> {
  /** Milliseconds until the call settles with the timeout error. */
  readonly timeoutMs: number;
  readonly signal?: AbortSignal | undefined;
  /** Runs exactly once when the call settles, however it settles; for the owner's own bookkeeping. */
  readonly onSettle?: SettleListener<K> | undefined;
}

/** Told once how a call ended; the key lets one listener serve every call. */
export type SettleListener<K> = (outcome: 'resolved' | 'rejected' | 'timeout' | 'aborted', key: K) => void;

/** The longest delay one Node timer takes. */
const maxTimerMs = 2_147_483_647;

interface Entry<K, V> {
  readonly resolve: (value: V) => void;
  readonly reject: (error: Error) => void;
  /** Replaced when a wait longer than one Node timer is re-armed. */
  timer: NodeJS.Timeout;
  readonly signal: AbortSignal | undefined;
  readonly onAbort: (() => void) | undefined;
  readonly onSettle: SettleListener<K> | undefined;
}

/**
 * The table of calls waiting for an answer. Every way a call can end (answer,
 * error, timeout, abort, close) goes through `settle`, which clears the timer,
 * removes the abort listener and deletes the entry: nothing is left behind.
 */
export class PendingCalls<K, V> {
  private readonly entries = new Map<K, Entry<K, V>>();
  private readonly maxPending: number;

  constructor(private readonly options: PendingCallsOptions<K>) {
    this.maxPending = options.maxPending ?? 10_000;
  }

  get size(): number {
    return this.entries.size;
  }

  has(key: K): boolean {
    return this.entries.has(key);
  }

  /** Registers a call; the promise settles through `resolve`/`reject`, the timeout, the signal, or `rejectAll`. */
  add(key: K, opts: AddOptions<K>): Promise<V> {
    if (this.entries.size >= this.maxPending) return Promise.reject(new RpcPendingLimitError(this.maxPending));
    if (this.entries.has(key)) return Promise.reject(new TypeError(`duplicate pending key: ${String(key)}`));
    if (opts.signal?.aborted) return Promise.reject(this.options.abortError(key, opts.signal.reason));
    return new Promise<V>((resolve, reject) => {
      // No closures per call where a shared function will do: a busy client adds thousands of calls a second.
      const timer = this.arm(key, opts.timeoutMs);
      const signal = opts.signal;
      const onAbort = signal ? (): void => void this.settle(key, 'aborted', this.options.abortError(key, signal.reason)) : undefined;
      if (onAbort) signal?.addEventListener('abort', onAbort, { once: true });
      this.entries.set(key, { resolve, reject, timer, signal, onAbort, onSettle: opts.onSettle });
    });
  }

  /** Settles a call with its answer; false when nothing waits under that key (a late or unknown reply). */
  resolve(key: K, value: V): boolean {
    return this.settle(key, 'resolved', undefined, value);
  }

  reject(key: K, error: Error): boolean {
    return this.settle(key, 'rejected', error);
  }

  /** Fails every waiting call, e.g. when the connection they depend on is gone. Returns how many. */
  rejectAll(error: Error | ((key: K) => Error)): number {
    const keys = [...this.entries.keys()];
    for (const key of keys) this.settle(key, 'rejected', typeof error === 'function' ? error(key) : error);
    return keys.length;
  }

  keys(): K[] {
    return [...this.entries.keys()];
  }

  private readonly expire = (key: K): void => void this.settle(key, 'timeout', this.options.timeoutError(key));

  /** Node fires a timer longer than 2^31 − 1 ms at once (TimeoutOverflowWarning): a longer wait (a call delayed for weeks) is armed in legs. */
  private arm(key: K, ms: number): NodeJS.Timeout {
    return ms > maxTimerMs ? setTimeout(this.rearm, maxTimerMs, key, ms - maxTimerMs) : setTimeout(this.expire, Math.max(0, ms), key);
  }

  private readonly rearm = (key: K, leftMs: number): void => {
    const entry = this.entries.get(key);
    if (entry) entry.timer = this.arm(key, leftMs);
  };

  private settle(key: K, outcome: 'resolved' | 'rejected' | 'timeout' | 'aborted', error?: Error, value?: V): boolean {
    const entry = this.entries.get(key);
    if (!entry) return false;
    this.entries.delete(key);
    clearTimeout(entry.timer);
    if (entry.onAbort) entry.signal?.removeEventListener('abort', entry.onAbort);
    try {
      entry.onSettle?.(outcome, key);
    } finally {
      if (outcome === 'resolved') entry.resolve(value as V);
      else entry.reject(error ?? new Error('settled without an error'));
    }
    return true;
  }
}
