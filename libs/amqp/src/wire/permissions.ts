import type { Names } from './names';

/**
 * RabbitMQ permissions of one user in one vhost: three regular expressions
 * over resource names (exchanges and queues), as `rabbitmqctl set_permissions`
 * takes them. configure: declare and delete; write: publish to an exchange,
 * bind a queue (write on the queue); read: consume, get, purge a queue, bind
 * from an exchange (read on the exchange).
 */
export interface Permissions {
  readonly configure: string;
  readonly write: string;
  readonly read: string;
}

/** What a process does on the bus, beyond calling: each adds the resources it needs. */
export interface Role {
  /** Calls and notifies: its client's reply queues are `NS.reply.<clientIdPrefix>-<12 characters>` (ClientOptions.clientIdPrefix). */
  readonly clientIdPrefix: string;
  /** Serves as this service (ServiceOptions.name): its own queues, and the exchanges it binds them to. */
  readonly service?: string;
  /** Listens to discovery (ServiceRegistry: a server-named exclusive queue on NS.control) and asks for announcements. */
  readonly discovery?: boolean;
  /** Lists, replays and purges every service's dead-letter queue (the broker's dlq.*). */
  readonly deadLetters?: boolean;
  /** Sends delayed calls (delayMs / notBefore): declares the delay chain (delay.ts) and publishes into it. */
  readonly delayed?: boolean;
}

/** RabbitMQ's name for the default exchange, which permissions name when a process publishes to a queue directly. */
const defaultExchange = 'amq.default';
/** Names are [A-Za-z0-9_.-] (names.ts), so '.' is the only character to escape; '-' means itself outside a class. */
const literal = (name: string): string => name.replace(/\./g, '\\.');
/** The random part of a default client id after its prefix (client-options.ts: 9 random bytes in base64url). */
const clientIdTail = '-[A-Za-z0-9_-]{12}';
/** Instance ids are resource names (names.ts): `NS.evt|ctl|cancel.<service>.<instanceId>` queues, all exclusive. */
const instanceId = '[A-Za-z0-9][A-Za-z0-9_.-]*';
const alternatives = (items: readonly string[]): string => (items.length === 0 ? '^$' : `^(${[...new Set(items)].join('|')})$`);

/**
 * The permissions a process needs on the bus of namespace `n` for `role`,
 * and nothing more: a caller may publish requests, notifications and
 * cancels, and read only its own reply queues; a service may declare,
 * consume and bind only its own queues. Exclusive queues (an instance's
 * event, control and cancel queues; the registry's) are private to their
 * connection whatever the permissions say.
 *
 * Limits that no vhost permission can close (docs/security.md): anyone who
 * may publish replies (a service) publishes through the default exchange to
 * any queue, a reply queue included, which is why callers check `user_id`
 * (ClientOptions.replyUsers); and binding needs read on `NS.rpc`, which
 * cannot be narrowed to one service's methods (direct exchanges have no
 * topic permissions), so a service could bind its queue to another's method
 * and get copies of its requests.
 *
 * @example
 * permissionsFor(names('warren'), { clientIdPrefix: 'calculator', service: 'calculator' })
 */
export function permissionsFor(n: Names, role: Role): Permissions {
  const ex = {
    rpc: literal(n.requestExchange), events: literal(n.eventExchange), dlx: literal(n.deadLetterExchange),
    control: literal(n.controlExchange), discover: literal(n.discoverExchange), cancel: literal(n.cancelExchange),
  };
  // Every client and service declares the core exchanges (coreTopology) after each connect.
  const coreExchanges = Object.values(ex);
  // Each reply queue and its restart probe (`.probe`, names.ts).
  const replyQueues = `${literal(n.replyQueue(role.clientIdPrefix))}${clientIdTail}(\\.probe)?`;
  const configure = [...coreExchanges, replyQueues];
  const write = [ex.rpc, ex.events, ex.cancel];
  const read = [replyQueues];
  if (role.service !== undefined) {
    const s = role.service;
    const own = [
      literal(n.serviceQueue(s)), literal(n.deadLetterQueue(s)), `${literal(n.serviceQueue(s))}\\.retry\\.[0-9]+`, literal(n.serviceEventQueue(s)),
      `${literal(n.instanceEventQueue(s, ''))}${instanceId}`, `${literal(n.instanceControlQueue(s, ''))}${instanceId}`, `${literal(n.cancelQueue(s, ''))}${instanceId}`,
    ];
    configure.push(...own);
    // Binding needs write on the queue; publishing: announcements, hand dead-lettering, replies, progress and retries (default exchange).
    write.push(...own, ex.control, ex.dlx, literal(defaultExchange));
    // Consuming its queues; binding them needs read on each exchange they are bound to.
    read.push(...own, ex.rpc, ex.events, ex.dlx, ex.discover, ex.cancel);
  }
  if (role.discovery === true) {
    const serverNamed = 'amq\\.gen-.*';
    configure.push(serverNamed);
    write.push(serverNamed, ex.discover);
    read.push(serverNamed, ex.control);
  }
  if (role.delayed === true) {
    // The chain's exchanges and queues (delay.ts). Declaring a queue with a dead-letter exchange needs read on the
    // queue and write on that exchange; binding a queue, write on it and read on the exchange; binding an exchange
    // to another, write on the destination (a lower level, the due exchange, NS.rpc, NS.events) and read on the
    // source. RabbitMQ dead-letters from level to level itself, with no user's permission.
    const levels = `${literal(n.delayExchange(0)).slice(0, -1)}[0-9]{1,2}`;
    const due = literal(n.delayDueExchange);
    const waits = `${levels}\\.wait`;
    configure.push(levels, due, waits);
    write.push(levels, due, waits);
    read.push(levels, due, waits);
  }
  if (role.deadLetters === true) {
    // Any service's dead letters: read to list and purge; replays go back to the service queue through the default exchange.
    read.push(`${literal(n.serviceQueue(''))}[A-Za-z0-9][A-Za-z0-9_.-]*\\.dead`);
    write.push(literal(defaultExchange));
  }
  return { configure: alternatives(configure), write: alternatives(write), read: alternatives(read) };
}

/** The arguments of `rabbitmqctl set_permissions` for one user (each one argument, unquoted). */
export function setPermissionsArgs(vhost: string, user: string, p: Permissions): string[] {
  return ['set_permissions', '-p', vhost, user, p.configure, p.write, p.read];
}

/** The same as one shell line; arguments with characters a shell would read are single-quoted. */
export function setPermissionsLine(vhost: string, user: string, p: Permissions): string {
  const quoted = (arg: string): string => (/^[A-Za-z0-9_.,/=-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`);
  return ['rabbitmqctl', ...setPermissionsArgs(vhost, user, p)].map(quoted).join(' ');
}
