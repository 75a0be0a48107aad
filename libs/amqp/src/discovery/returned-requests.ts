import type { WireConnection } from '@warren/amqp-transport';
import { RpcNoConsumersError, type LocalError } from '@warren/jsonrpc';
import { silentLogger, type Logger } from '@warren/logger';
import type { RpcClient } from '../engine/client';
import type { ReturnExplainer } from '../engine/returned-request';
import { announcedMethods, noRouteHint } from './no-route-hint';
import { ServiceRegistry } from './registry';

export interface ReturnedRequestsOptions {
  /** The announcements are listened to this long after the last returned request, then no more. @default 30000 */
  readonly idleMs?: number;
  readonly logger?: Logger;
}

/**
 * The explainer every client Warren makes (connectClient, a service's `ctx` client) starts with: a request
 * RabbitMQ returned (312 NO_ROUTE) for a method some live service announces fails -32002 (RpcNoConsumersError,
 * `data.reason: "queue_unavailable"`, naming the service), not -32601. RabbitMQ 3.10 returns a request alike when
 * no queue is bound and when the bound classic queue's home node is down; only announcements tell them apart.
 *
 * Nothing runs until a request is returned, so the calls that are answered pay nothing. The first return starts
 * a ServiceRegistry on the client's connection (a server-named exclusive queue bound to `NS.control`, an
 * announce-now on `NS.discover`): a returned call to a served method fails as soon as an announcement naming it
 * arrives (within the instances' announce-now jitter, 200 ms), one to an unserved method when the first round is
 * over (about 0.7 s, 3 s at most); later returns answer from what was heard at once. It stops listening `idleMs`
 * after the last return. A client whose RabbitMQ user may not listen to discovery (docs/security.md,
 * `discovery`) keeps -32601.
 */
export class AnnouncedMethods {
  private registry: Promise<ServiceRegistry | undefined> | undefined;
  /** Returned calls waiting for the first round, by method: told the service as soon as one announces it. */
  private readonly waiting = new Map<string, ((service: string | undefined) => void)[]>();
  private idle: NodeJS.Timeout | undefined;
  private closed = false;
  private readonly idleMs: number;
  private readonly log: Logger;

  constructor(private readonly connection: WireConnection, private readonly namespace: string, options: ReturnedRequestsOptions = {}) {
    this.idleMs = options.idleMs ?? 30_000;
    this.log = (options.logger ?? silentLogger()).child({ component: 'returned-requests' });
  }

  /** The ReturnExplainer: -32002 for a method a live service announces, -32601 with the near methods for any other. */
  readonly explain = async (method: string): Promise<LocalError | undefined> => {
    if (this.closed) return undefined;
    this.registry ??= this.listen();
    this.stopLater();
    const registry = await this.registry;
    if (!registry) return undefined;
    let service = serviceOf(registry, method);
    if (service === undefined && !registry.discoveryComplete) service = await new Promise((resolve) => this.waiting.set(method, [...(this.waiting.get(method) ?? []), resolve]));
    // Nobody announces it: -32601 naming the namespace and the announced methods near it.
    return service === undefined ? noRouteHint(method, this.namespace, announcedMethods(registry)) : new RpcNoConsumersError(service, method, 0, { reason: 'queue_unavailable' });
  };

  /** Stops listening (idempotent); later returns stay -32601. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.idle);
    await this.stop();
  }

  private async listen(): Promise<ServiceRegistry | undefined> {
    try {
      const registry = await ServiceRegistry.start(this.connection, { namespace: this.namespace, logger: this.log });
      registry.on('change', () => this.tell(registry, false));
      void registry.discovered().then(() => this.tell(registry, true));
      return registry;
    } catch (err) {
      // Not allowed to listen (permissions), or the connection went: -32601 stands, until the next idle period.
      this.log.debug({ err }, 'announcements not heard; returned requests stay -32601');
      return undefined;
    }
  }

  /** Tells the waiting calls whose method is now announced; at the round's end (`over`), every waiting call. */
  private tell(registry: ServiceRegistry, over: boolean): void {
    for (const [method, waiters] of this.waiting) {
      const service = serviceOf(registry, method);
      if (service === undefined && !over) continue;
      this.waiting.delete(method);
      for (const resolve of waiters) resolve(service);
    }
  }

  private stopLater(): void {
    clearTimeout(this.idle);
    this.idle = setTimeout(() => void this.stop(), this.idleMs);
    this.idle.unref();
  }

  private async stop(): Promise<void> {
    const registry = this.registry;
    this.registry = undefined;
    const stopped = await registry;
    if (stopped) this.tell(stopped, true);
    await stopped?.close();
  }
}

function serviceOf(registry: ServiceRegistry, method: string): string | undefined {
  return registry.list().find((i) => i.methods.some((m) => m.name === method))?.service;
}

/**
 * Installs {@link AnnouncedMethods} as `client`'s explainer of returned requests, behind any installed before
 * (guardAvailability installs its own in front of it later). Returns it, for its owner's close.
 *
 * @example
 * const returns = explainReturnedRequests(client, connection);
 * await client.call('work.run'); // -32002 `queue_unavailable` while work's classic queue's node is down, not -32601
 * await returns.close();
 */
export function explainReturnedRequests(client: Pick<RpcClient, 'explainReturns' | 'namespace'>, connection: WireConnection, options: ReturnedRequestsOptions = {}): AnnouncedMethods {
  const announced = new AnnouncedMethods(connection, client.namespace, options);
  const previous: ReturnExplainer | undefined = client.explainReturns(announced.explain);
  if (previous) client.explainReturns(async (method) => (await previous(method)) ?? announced.explain(method));
  return announced;
}
