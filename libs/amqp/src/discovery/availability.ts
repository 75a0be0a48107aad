import { closeChannel, type WireModel, type WireConnection } from '@warren/amqp-transport';
import { RpcNoConsumersError } from '@warren/jsonrpc';
import type { RpcClient } from '../engine/client';
import { names, type Names } from '../wire/names';
import type { ServiceRegistry } from './registry';
import type { AvailabilityVerdict } from '../engine/availability-verdict';
import { checkInt } from '@warren/config';
import { announcedMethods, noRouteHint } from './no-route-hint';

/** A service request queue's depth, as RabbitMQ reports it (`queue.declare` passive). */
export interface QueueDepth {
  /** Requests waiting (ready, not yet delivered to a consumer). */
  readonly messages: number;
  /** Live consumers: instances taking requests now. */
  readonly consumers: number;
}

/** Which service serves a method; undefined when this process has never heard. */
export interface MethodDirectory {
  serviceOf(method: string): string | undefined;
  /**
   * Whether a live instance of `service` is paused by an operator: its calls wait in the queue for
   * the resume instead of failing for want of a consumer. @default never
   */
  paused?(service: string): boolean;
}

/**
 * A directory built from a registry's announcements. A mapping outlives the
 * instances that announced it: a method whose every instance died is still
 * known to belong to its service, which is exactly when the check matters.
 * Later announcements win.
 */
export function registryDirectory(registry: Pick<ServiceRegistry, 'list' | 'on' | 'off'>): MethodDirectory & { close(): void } {
  const byMethod = new Map<string, string>();
  const learn = (): void => {
    for (const instance of registry.list()) for (const m of instance.methods) byMethod.set(m.name, instance.service);
  };
  learn();
  registry.on('change', learn);
  const paused = (service: string): boolean => registry.list().some((i) => i.service === service && i.worker?.paused === true && !i.worker.draining);
  return { serviceOf: (method) => byMethod.get(method), paused, close: () => void registry.off('change', learn) };
}

/**
 * Reads queue depths with passive declares, each on a channel of its own: a
 * missing queue makes RabbitMQ close the channel (404), which must not take
 * any other work with it. One read per service at a time.
 */
export class QueueDepths {
  private readonly n: Names;
  /** Each service's read, kept `maxAgeMs` after it settles (and shared while it runs). */
  private readonly reads = new Map<string, { readonly depth: Promise<QueueDepth | undefined>; at: number }>();

  /** `maxAgeMs`: how long a read answers again; views polling /services then cost one passive declare per service per second. */
  constructor(private readonly connection: Pick<WireConnection, 'model'>, namespace?: string, private readonly maxAgeMs = 1000) {
    this.n = names(namespace);
  }

  /** The depth of `service`'s request queue; undefined when the queue does not exist or RabbitMQ is not reachable. */
  read(service: string): Promise<QueueDepth | undefined> {
    return this.cached(service, this.n.serviceQueue(service));
  }

  /** The depth of `service`'s dead-letter queue (metrics), cached like {@link read}. */
  readDeadLetters(service: string): Promise<QueueDepth | undefined> {
    // A key no service name can take (names are AMQP resource names, without spaces).
    return this.cached(`dead ${service}`, this.n.deadLetterQueue(service));
  }

  private cached(key: string, queue: string): Promise<QueueDepth | undefined> {
    const known = this.reads.get(key);
    if (known && (known.at === 0 || Date.now() - known.at < this.maxAgeMs)) return known.depth;
    const entry = { depth: readDepth(this.connection.model, queue), at: 0 };
    // Settled reads are dated; the map holds one entry per queue the views, the gate or the metrics asked about.
    void entry.depth.then(() => (entry.at = Date.now()), () => this.reads.delete(key));
    this.reads.set(key, entry);
    return entry.depth;
  }

  /** Forgets `service`'s last read (its instances changed), so the next read asks RabbitMQ. */
  forget(service: string): void {
    this.reads.delete(service);
    this.reads.delete(`dead ${service}`);
  }
}

async function readDepth(model: WireModel | undefined, queue: string): Promise<QueueDepth | undefined> {
  if (!model) return undefined;
  const ch = await model.createChannel().catch(() => undefined);
  if (!ch) return undefined;
  ch.on('error', () => undefined); // a 404 closes the channel; that is the answer
  try {
    const ok = await ch.checkQueue(queue);
    return { messages: ok.messageCount, consumers: ok.consumerCount };
  } catch {
    return undefined;
  } finally {
    await closeChannel(ch).catch(() => undefined);
  }
}

export interface AvailabilityOptions {
  /** How long a queue's consumer count is trusted before it is read again. @default 1000 */
  readonly ttlMs?: number;
}

/**
 * Fails at once (RpcNoConsumersError, -32002 on the wire) a call whose service has no live consumer,
 * instead of letting it wait in a queue nobody reads until its deadline.
 * RabbitMQ cannot tell a publisher that (`mandatory` only fires when no
 * queue is bound, and the durable queue outlives its consumers), so the
 * caller asks: a passive declare of the service's queue, cached `ttlMs`.
 *
 * The hot path stays synchronous: a fresh count answers from the cache. Once
 * per `ttlMs` per service, the calls that find the count stale wait for one
 * read (a channel open, a passive declare: about a millisecond on a LAN), so
 * a service whose consumers went away is noticed within `ttlMs`; a withdrawn
 * or newly announced instance clears the cache for its service at once.
 *
 * A method whose service is unknown (no announcement heard yet), or whose
 * queue cannot be read (missing, or its classic queue's home node down), goes
 * ahead as before; if RabbitMQ then returns it unrouted, `returned` answers
 * -32002 for a service it has heard of, and -32601 stays for any other.
 */
export class AvailabilityGate {
  private readonly ttlMs: number;
  private readonly seen = new Map<string, { depth: QueueDepth; at: number }>();

  constructor(private readonly directory: MethodDirectory, private readonly depths: Pick<QueueDepths, 'read'>, options: AvailabilityOptions = {}) {
    this.ttlMs = options.ttlMs ?? 1000;
    checkInt('AvailabilityOptions.ttlMs', this.ttlMs, { min: 0, expected: 'a whole number >= 0' });
  }

  /** The verdict for a call to `method`. */
  check(method: string): AvailabilityVerdict {
    const service = this.directory.serviceOf(method);
    if (service === undefined) return undefined;
    const known = this.seen.get(service);
    if (known && Date.now() - known.at < this.ttlMs) return this.verdict(known.depth, service, method);
    return this.refresh(service).then((depth) => (depth ? this.verdict(depth, service, method) : undefined));
  }

  /**
   * What a request RabbitMQ returned unrouted fails with: a method of a service it has heard of is unavailable
   * (-32002 `queue_unavailable`: its queue exists but cannot take it now, e.g. a classic queue whose home node is down, which
   * RabbitMQ returns 312 NO_ROUTE exactly as if no queue were bound); any other stays -32601 (undefined here).
   */
  returned(method: string): RpcNoConsumersError | undefined {
    const service = this.directory.serviceOf(method);
    if (service === undefined) return undefined;
    this.forget(service);
    return new RpcNoConsumersError(service, method, 0, { reason: 'queue_unavailable' });
  }

  /** Forgets what is known of `service` (its instances changed), so the next call reads its queue again. */
  forget(service: string): void {
    this.seen.delete(service);
  }

  /** The last depth read for `service`, if any (for views such as /services). */
  last(service: string): QueueDepth | undefined {
    return this.seen.get(service)?.depth;
  }

  /** No consumer fails the call, unless an instance is only paused: then the call waits in the queue for its resume. */
  private verdict(depth: QueueDepth, service: string, method: string): RpcNoConsumersError | undefined {
    if (depth.consumers > 0 || this.directory.paused?.(service) === true) return undefined;
    return new RpcNoConsumersError(service, method, depth.messages);
  }

  private async refresh(service: string): Promise<QueueDepth | undefined> {
    const depth = await this.depths.read(service);
    if (depth) this.seen.set(service, { depth, at: Date.now() });
    else this.seen.delete(service);
    return depth;
  }
}



/**
 * Installs an availability check on `client`, its directory learned from
 * `registry`. Returns the depth reader too, for views (the broker's /services).
 *
 * @example
 * const { depths } = guardAvailability(client, connection, registry);
 * await client.call('add', [1, 2]); // RpcNoConsumersError (-32002 on the wire) at once if no calculator instance is running
 */
export function guardAvailability(
  client: Pick<RpcClient, 'checkAvailability' | 'explainReturns' | 'namespace'>,
  connection: Pick<WireConnection, 'model'>,
  registry: Pick<ServiceRegistry, 'list' | 'on' | 'off'>,
  options: AvailabilityOptions = {},
): { readonly gate: AvailabilityGate; readonly depths: QueueDepths; close(): void } {
  // One age for both caches: the gate's verdicts and the depths it reads them from.
  const depths = new QueueDepths(connection, client.namespace, options.ttlMs ?? 1000);
  const directory = registryDirectory(registry);
  const gate = new AvailabilityGate(directory, depths, options);
  // An instance that withdrew (graceful stop) or announced itself changes the answer now, not in ttlMs.
  let last = new Set<string>();
  const onChange = (): void => {
    const now = new Set(registry.list().map((i) => `${i.service}/${i.instanceId}`));
    for (const key of [...now, ...last]) {
      if (now.has(key) === last.has(key)) continue;
      const service = key.slice(0, key.indexOf('/'));
      gate.forget(service);
      depths.forget(service);
    }
    last = now;
  };
  registry.on('change', onChange);
  client.checkAvailability((method) => gate.check(method));
  // In front of the client's own explainer (the announcements it hears after a return), which answers what the gate
  // does not know; a method nobody announced: -32601 naming the namespace and the announced methods near it (computed only then).
  const fallback = client.explainReturns(async (method) => gate.returned(method) ?? (await fallback?.(method)) ?? noRouteHint(method, client.namespace, announcedMethods(registry)));
  return {
    gate,
    depths,
    /** Removes the check from the client and stops listening to the registry (the owner's close). */
    close: () => {
      client.checkAvailability(undefined);
      client.explainReturns(fallback);
      registry.off('change', onChange);
      directory.close();
    },
  };
}
