/**
 * Which token made each call the gateway relays, so the authorization rule (authz.ts) can tell a
 * client its own calls: every running call, and the most recent finished ones (a client asks
 * `inflight.status` of a call after it ended). Bounded: past `capacity` finished calls, the oldest
 * are forgotten and read as someone else's.
 *
 * @example
 * const owners = new CallOwners(2);
 * owners.started('c1', 0); owners.finished('c1');
 * owners.owner('c1'); // 0
 */
export class CallOwners {
  private readonly running = new Map<string, number>();
  /** Finished calls, oldest first (a Map keeps insertion order). */
  private readonly recent = new Map<string, number>();

  /** @param capacity finished calls remembered. @default 10000 */
  constructor(private readonly capacity = 10_000) {}

  started(callId: string, token: number): void {
    this.running.set(callId, token);
  }

  finished(callId: string): void {
    const token = this.running.get(callId);
    if (token === undefined) return;
    this.running.delete(callId);
    this.recent.set(callId, token);
    if (this.recent.size > this.capacity) {
      const oldest = this.recent.keys().next();
      if (oldest.done !== true) this.recent.delete(oldest.value);
    }
  }

  /** The token that made the call; undefined when unknown (another gateway, an AMQP caller, forgotten). */
  owner(callId: string): number | undefined {
    return this.running.get(callId) ?? this.recent.get(callId);
  }

  /** Whether the call is running now with `token`. */
  runningWith(callId: string, token: number): boolean {
    return this.running.get(callId) === token;
  }
}
