/**
 * Publishes held while the connection is down, bounded so an outage cannot
 * grow memory without limit. Each entry decides at flush time whether it is
 * still wanted (its call may have timed out meanwhile).
 */
export class OfflineBuffer {
  private readonly held: (() => void)[] = [];

  constructor(private readonly limit: number) {}

  get size(): number {
    return this.held.length;
  }

  /** Holds a publish; false when full (the caller fails it with RpcBufferFullError). */
  hold(publish: () => void): boolean {
    if (this.held.length >= this.limit) return false;
    this.held.push(publish);
    return true;
  }

  /** Runs every held publish in order, once. */
  flush(): void {
    for (const publish of this.held.splice(0)) publish();
  }
}
