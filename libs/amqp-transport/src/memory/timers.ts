/**
 * The timers and deferred work a MemoryBroker owns. Timers use the global
 * setTimeout at the time they are set (so jest's fake timers drive them) and
 * are all cleared on close. Deferred work runs on a promise job, which fake
 * timers leave alone: deliveries stay asynchronous, as from a socket, without
 * a test having to advance a clock to see them.
 */
export class BrokerTimers {
  private readonly live = new Set<NodeJS.Timeout>();
  private closed = false;

  after(ms: number, fn: () => void): NodeJS.Timeout | undefined {
    if (this.closed) return undefined;
    const timer = setTimeout(() => {
      this.live.delete(timer);
      fn();
    }, ms);
    timer.unref?.();
    this.live.add(timer);
    return timer;
  }

  clear(timer: NodeJS.Timeout | undefined): void {
    if (timer === undefined) return;
    clearTimeout(timer);
    this.live.delete(timer);
  }

  defer(fn: () => void): void {
    if (this.closed) return;
    void Promise.resolve().then(() => {
      if (!this.closed) fn();
    });
  }

  close(): void {
    this.closed = true;
    for (const t of this.live) clearTimeout(t);
    this.live.clear();
  }

  get pending(): number {
    return this.live.size;
  }
}
