import { Cluster, type Command, type Redis } from 'ioredis';

/** A single-node (or Sentinel) client, or a cluster client. */
export type RedisClient = Redis | Cluster;

type Sender = { sendCommand(command: Command, ...rest: never[]): unknown };

/**
 * Fails a command Redis has not answered within `timeoutMs`, as ioredis's `commandTimeout` would, but
 * never one whose reply came while the event loop was blocked. ioredis arms a timer per command, and once
 * the loop was blocked for longer than the timeout (a handler's synchronous work, a long garbage
 * collection), Node runs the timers before it reads the sockets: the command fails although its reply is
 * waiting (measured: 5 of 10 commands sent just before a 400 ms block, 200 ms timeout). A tracker then
 * takes Redis for gone, a scheduler its lease, a service its event log. Here a timer that fires looks
 * again after the poll phase of its turn (setImmediate), when every reply already received has been read.
 * Pipelines and transactions send through the same `sendCommand`, so their commands are covered; a
 * cluster's node clients get the same (pipelines send through them directly). Leave ioredis's own
 * `commandTimeout` unset on `client`, or it still fails them first.
 *
 * @example
 * const redis = new Redis(url, { maxRetriesPerRequest: 1 }); // no commandTimeout
 * stallTolerantTimeouts(redis, 2000);
 */
export function stallTolerantTimeouts(client: RedisClient, timeoutMs: number): void {
  const armed = new WeakSet<Command>();
  const wrap = (target: Sender): void => {
    const send = target.sendCommand.bind(target) as (command: Command, ...rest: never[]) => unknown;
    target.sendCommand = (command: Command, ...rest: never[]): unknown => {
      // A command passes here again when the offline queue is flushed: its clock started the first time.
      if (!armed.has(command)) {
        armed.add(command);
        armTimeout(command, timeoutMs);
      }
      return send(command, ...rest);
    };
  };
  wrap(client as unknown as Sender);
  if (client instanceof Cluster) client.on('+node', (node: Redis) => wrap(node as unknown as Sender));
}

function armTimeout(command: Command, timeoutMs: number): void {
  const expire = (): void => {
    if (!command.isSettled) command.reject(new Error('Command timed out'));
  };
  const timer = setTimeout(() => setImmediate(expire), timeoutMs);
  const clear = (): void => clearTimeout(timer);
  command.promise.then(clear, clear);
}
