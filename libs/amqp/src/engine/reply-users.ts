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
