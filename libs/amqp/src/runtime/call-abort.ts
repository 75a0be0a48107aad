import type { Abortable } from '@warren/calls';

/**
 * A running call's cancellation (deadline, cancel, shutdown). An AbortSignal
 * is an EventTarget: creating one and listening on it costs microseconds per
 * call, and most handlers never look at theirs. So the signal is made only
 * when someone asks for it, and the runtime itself waits through one plain
 * callback slot.
 */
export class CallAbort implements Abortable {
  private controller: AbortController | undefined;
  private fired = false;
  private why: unknown;
  private watcher: ((reason: unknown) => void) | undefined;

  get aborted(): boolean {
    return this.fired;
  }

  get reason(): unknown {
    return this.why;
  }

  get signal(): AbortSignal {
    if (this.controller === undefined) {
      this.controller = new AbortController();
      if (this.fired) this.controller.abort(this.why);
    }
    return this.controller.signal;
  }

  abort(reason?: unknown): void {
    if (this.fired) return;
    this.fired = true;
    // Same default as AbortController, so handlers see one kind of reason either way.
    this.why = reason ?? new DOMException('This operation was aborted', 'AbortError');
    this.controller?.abort(this.why);
    const watcher = this.watcher;
    this.watcher = undefined;
    watcher?.(this.why);
  }

  /** Races `work` against this abort: resolves with `aborted` if the abort comes first. One race at a time. */
  race<T, A>(work: Promise<T>, aborted: A): Promise<T | A> {
    if (this.fired) return Promise.resolve(aborted);
    return new Promise<T | A>((resolve, reject) => {
      this.watcher = () => resolve(aborted);
      work.then(
        (value) => {
          this.watcher = undefined;
          resolve(value);
        },
        (err: unknown) => {
          this.watcher = undefined;
          reject(err);
        },
      );
    });
  }
}
