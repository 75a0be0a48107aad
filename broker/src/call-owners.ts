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
  private readonly recent = new Map<string, number>();
  /**
   * The finished calls' ids in the order they finished, in a ring: the slot the next one takes holds the
   * oldest, forgotten then. (A Map's oldest key, `keys().next()`, walks past every entry deleted since the
   * Map last rehashed: with one call in and one out per call, that walk showed in the gateway's profile.)
   */
  private readonly order: Array<string | undefined>;
  private at = 0;

  /** @param capacity finished calls remembered. @default 10000 */
  constructor(private readonly capacity = 10_000) {
    this.order = new Array<string | undefined>(capacity);
  }

  started(callId: string, token: number): void {
    this.running.set(callId, token);
  }

  finished(callId: string): void {
    const token = this.running.get(callId);
    if (token === undefined) return;
    this.running.delete(callId);
    if (this.capacity <= 0) return;
    const oldest = this.order[this.at];
    if (oldest !== undefined) this.recent.delete(oldest);
    this.order[this.at] = callId;
    this.at = (this.at + 1) % this.capacity;
    this.recent.set(callId, token);
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
