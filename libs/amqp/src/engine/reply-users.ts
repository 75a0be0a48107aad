/**
 * The RabbitMQ user whose replies (and progress) a call to `method` accepts,
 * or `undefined` to leave the method unchecked (ClientOptions.replyUsers).
 */
export type ReplyUsers = (method: string) => string | undefined;

/** One service of a {@link replyUsersOf} table: the RabbitMQ user it runs as and the methods it serves. */
export interface TrustedService {
  readonly user: string;
  readonly methods: readonly string[];
}

/**
 * Builds `replyUsers` from a table of services: a call to one of a service's
 * methods accepts replies only from that service's RabbitMQ user. A method
 * listed under two services is refused (which of them should answer?).
 * Methods not listed are not checked, so list every method whose answers
 * matter.
 *
 * @example
 * connectClient({ urls, clientIdPrefix: 'web', replyUsers: replyUsersOf({
 *   calculator: { user: 'calculator', methods: ['add', 'divide'] },
 *   audit: { user: 'audit', methods: ['audit.recent'] },
 * }) });
 */
export function replyUsersOf(services: Readonly<Record<string, TrustedService>>): ReplyUsers {
  const byMethod = new Map<string, string>();
  for (const [service, { user, methods }] of Object.entries(services)) {
    if (user.length === 0) throw new RangeError(`replyUsersOf: service ${JSON.stringify(service)} has an empty user`);
    for (const method of methods) {
      const other = byMethod.get(method);
      if (other !== undefined && other !== user) throw new RangeError(`replyUsersOf: method ${JSON.stringify(method)} is listed under two users (${other}, ${user})`);
      byMethod.set(method, user);
    }
  }
  return (method) => byMethod.get(method);
}

/**
 * One client's checks of who answered (ClientOptions.replyUsers): the user
 * each checked call expects, from send until it settles, and what was dropped.
 */
export class ReplyTrust {
  private readonly expected = new Map<string, string>();
  /** Replies and progress dropped as not from the expected user. */
  dropped = 0;

  constructor(private readonly users: ReplyUsers | undefined) {}

  /** Remembers whose answers the call `callId` to `method` accepts (nothing when the method is not checked). */
  expect(callId: string, method: string): void {
    const user = this.users?.(method);
    if (user !== undefined) this.expected.set(callId, user);
  }

  forget(callId: string): void {
    if (this.expected.size > 0) this.expected.delete(callId);
  }

  /**
   * The user a reply or progress report for `callId` with this `userId` should
   * have come from, when it did not (the caller drops it); undefined: accepted.
   * Any member of the bus can publish to a reply queue (default exchange), but
   * only RabbitMQ sets a `user_id` it has checked (docs/security.md).
   */
  refusal(callId: string | undefined, userId: string | undefined): string | undefined {
    const expected = callId === undefined || this.expected.size === 0 ? undefined : this.expected.get(callId);
    if (expected === undefined || userId === expected) return undefined;
    this.dropped++;
    return expected;
  }
}
