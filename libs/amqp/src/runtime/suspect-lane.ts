import type { Abortable, Isolation } from '@warren/calls';


interface Waiter {
  readonly wake: () => void;
}

/** The {@link Isolation} of one service instance. */
export class SuspectLane implements Isolation {
  private active = 0;
  /** A suspect has the lane: it waits for `active` to reach 0, or runs. */
  private held = false;
  /** Whoever holds the lane while it waits for the work running here to end. */
  private draining: (() => void) | undefined;
  private readonly suspects: Waiter[] = [];
  private readonly gated: Waiter[] = [];

  /** Work counted as running now (tests, metrics). */
  get running(): number {
    return this.active;
  }

  /** Suspects waiting for their turn, and whether one has the lane now. */
  get suspectsWaiting(): number {
    return this.suspects.length + (this.held ? 1 : 0);
  }

  enter(abort: Abortable): true | Promise<boolean> {
    if (!this.held) {
      this.active++;
      return true;
    }
    return this.wait(this.gated, abort).then((woken) => {
      if (!woken) return false;
      // Woken when the lane opened; a suspect may have taken it again since.
      return this.enter(abort);
    });
  }

  leave(): void {
    if (this.active > 0) this.active--;
    if (this.active === 0 && this.draining) {
      const drained = this.draining;
      this.draining = undefined;
      drained();
    }
  }

  async alone(abort: Abortable): Promise<(() => void) | undefined> {
    if (this.held && !(await this.wait(this.suspects, abort))) return undefined;
    // The lane is ours (taken at once, or handed over by the previous suspect).
    this.held = true;
    if (this.active > 0 && !(await this.drain(abort))) {
      this.handOver();
      return undefined;
    }
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      this.handOver();
    };
  }

  /** Gives the lane to the next suspect, or opens it for the work held back. */
  private handOver(): void {
    const next = this.suspects.shift();
    if (next) {
      next.wake();
      return;
    }
    this.held = false;
    for (const waiter of this.gated.splice(0)) waiter.wake();
  }

  private drain(abort: Abortable): Promise<boolean> {
    return new Promise<boolean>((resolve) => {
      const signal = abort.signal;
      const onAbort = (): void => {
        this.draining = undefined;
        resolve(false);
      };
      if (signal.aborted) return onAbort();
      signal.addEventListener('abort', onAbort, { once: true });
      this.draining = () => {
        signal.removeEventListener('abort', onAbort);
        resolve(true);
      };
    });
  }

  /** Queues on `queue` until woken (true) or aborted (false, and taken off the queue). */
  private wait(queue: Waiter[], abort: Abortable): Promise<boolean> {
    return new Promise<boolean>((resolve) => {
      const signal = abort.signal;
      if (signal.aborted) return resolve(false);
      const waiter: Waiter = {
        wake: () => {
          signal.removeEventListener('abort', onAbort);
          resolve(true);
        },
      };
      const onAbort = (): void => {
        const i = queue.indexOf(waiter);
        if (i >= 0) queue.splice(i, 1);
        resolve(false);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      queue.push(waiter);
    });
  }
}
