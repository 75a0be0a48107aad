import { OverloadedError } from '@warren/jsonrpc';

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

  /** Holds a publish; throws Overloaded when full. */
  hold(publish: () => void): void {
    if (this.held.length >= this.limit) throw new OverloadedError(undefined, { reason: 'offline_buffer_full', limit: this.limit });
    this.held.push(publish);
  }

  /** Runs every held publish in order, once. */
  flush(): void {
    for (const publish of this.held.splice(0)) publish();
  }
}
