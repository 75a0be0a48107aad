import { AvailabilityGate, QueueDepths, RpcClient, ServiceRegistry, announcedMethods, noRouteHint, type DirectoryEntry } from '@warren/amqp';
import { RpcNoRouteError } from '@warren/jsonrpc';
import type { Caller } from './gateway-caller';
import type { Session } from './session';

/**
 * Looks up, in the method directory (Redis), which service serves each of
 * `methods`. A method the directory does not know, or every method when Redis
 * is slow or away, is left out: its call goes ahead unchecked.
 */
export async function lookUpServices(s: Session, methods: readonly string[]): Promise<ReadonlyMap<string, DirectoryEntry>> {
  const directory = s.directory();
  const found = await Promise.all([...new Set(methods)].map(async (m) => [m, await directory.lookup(m).catch(() => undefined)] as const));
  return new Map(found.flatMap(([m, entry]) => (entry ? [[m, entry] as const] : [])));
}

/**
 * Makes a call whose service has no live consumer fail at once with -32002
 * naming the service (`data.service`), as the broker's gateway does, instead of
 * waiting in a queue nobody reads until its deadline. The CLI has not heard
 * any announcement when it starts (and no instance is alive to announce when it
 * matters), so the method's service comes from the directory; the consumer
 * count from a passive declare of its queue (the gate of @warren/amqp).
 * Job-style methods are left to queue, as documented (docs/protocol.md).
 * Through the gateway (embedded mode) the gateway's own gate answers instead.
 */
export function guardCalls(s: Session, client: Caller, services: ReadonlyMap<string, DirectoryEntry>): void {
  const connection = s.connection;
  if (!connection || !(client instanceof RpcClient)) return;
  const gated = new Map([...services].filter(([, e]) => !e.jobStyle).map(([m, e]) => [m, e.service]));
  if (gated.size === 0) return;
  const gate = new AvailabilityGate({ serviceOf: (m) => gated.get(m) }, new QueueDepths(connection, client.namespace));
  client.checkAvailability((m) => gate.check(m));
  // A request RabbitMQ returns for a service the directory knows (its classic queue's home node down) is -32002, not -32601.
  const fallback = client.explainReturns((m) => gate.returned(m) ?? fallback?.(m));
}

/**
 * A call nobody serves (-32601), told the methods near it that the namespace's services announce
 * (`data.suggestions`): the CLI has heard no announcement, so it asks for them (one announce-now
 * round of 300 ms to 1 s) only now that the call failed. Any other error, or no answer, is as it was.
 */
export async function explainNoRoute(s: Session, err: unknown): Promise<unknown> {
  const connection = s.connection;
  if (!(err instanceof RpcNoRouteError) || err.suggestions !== undefined || !connection) return err;
  try {
    // A short round (instances answer within 100 ms, then 200 ms of quiet): the caller is waiting for its error.
    const registry = await ServiceRegistry.start(connection, { namespace: s.settings.namespace, jitterMs: 100, settleMs: 200, maxWaitMs: 1000 });
    try {
      await registry.discovered();
      return noRouteHint(err.method, s.settings.namespace, announcedMethods(registry));
    } finally {
      await registry.close();
    }
  } catch {
    return err;
  }
}
