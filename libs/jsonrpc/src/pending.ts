import { OverloadedError } from './errors';

export interface PendingCallsOptions<K> {
  /** Most calls waiting at once; past it `add` rejects with OverloadedError. @default 10000 */
  readonly maxPending?: number;
  /** The error a call settles with when its time runs out. */
  readonly timeoutError: (key: K) => Error;
  /** The error a call settles with when its signal aborts. */
  readonly abortError: (key: K, reason: unknown) => Error;
}

export interface AddOptions {
  /** Milliseconds until the call settles with the timeout error. */
  readonly timeoutMs: number;
  readonly signal?: AbortSignal | undefined;
  /** Runs exactly once when the call settles, however it settles; for the owner's own bookkeeping. */
  readonly onSettle?: ((outcome: 'resolved' | 'rejected' | 'timeout' | 'aborted') => void) | undefined;
}

interface Entry<V> {
  readonly resolve: (value: V) => void;
  readonly reject: (error: Error) => void;
  readonly timer: NodeJS.Timeout;
  readonly signal: AbortSignal | undefined;
  readonly onAbort: () => void;
  readonly onSettle: AddOptions['onSettle'];
}

/**
 * The table of calls waiting for an answer. Every way a call can end (answer,
 * error, timeout, abort, close) goes through `settle`, which clears the timer,
 * removes the abort listener and deletes the entry: nothing is left behind.
 */
export class PendingCalls<K, V> {
  private readonly entries = new Map<K, Entry<V>>();
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
  add(key: K, opts: AddOptions): Promise<V> {
    if (this.entries.size >= this.maxPending) return Promise.reject(new OverloadedError(undefined, { reason: 'too_many_pending_calls', limit: this.maxPending }));
    if (this.entries.has(key)) return Promise.reject(new TypeError(`duplicate pending key: ${String(key)}`));
    if (opts.signal?.aborted) return Promise.reject(this.options.abortError(key, opts.signal.reason));
    return new Promise<V>((resolve, reject) => {
      const timer = setTimeout(() => this.settle(key, 'timeout', this.options.timeoutError(key)), Math.max(0, opts.timeoutMs));
      const onAbort = (): void => void this.settle(key, 'aborted', this.options.abortError(key, opts.signal?.reason));
      opts.signal?.addEventListener('abort', onAbort, { once: true });
      this.entries.set(key, { resolve, reject, timer, signal: opts.signal, onAbort, onSettle: opts.onSettle });
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

  private settle(key: K, outcome: 'resolved' | 'rejected' | 'timeout' | 'aborted', error?: Error, value?: V): boolean {
    const entry = this.entries.get(key);
    if (!entry) return false;
    this.entries.delete(key);
    clearTimeout(entry.timer);
    entry.signal?.removeEventListener('abort', entry.onAbort);
    try {
      entry.onSettle?.(outcome);
    } finally {
      if (outcome === 'resolved') entry.resolve(value as V);
      else entry.reject(error ?? new Error('settled without an error'));
    }
    return true;
  }
}
