import { DeadLetterQueues, RpcClient, ServiceRegistry, startService, type ClientOptions, type ConnectTo, type ServiceMethod, type ServiceNotification, type WarrenService } from '@warren/amqp';
import { AmqpConnection, type ConnectionOptions, type WireConnection } from '@warren/amqp-transport';
import { silentLogger } from '@warren/logger';
import { withBrokerTools } from './broker-tools';
import { dlqMethods } from './dlq-methods';
import { workerMethods } from './worker-methods';
import { discoveryProbe } from './discovery-probe';
import { buildGateway, type Gateway } from './gateway';
import { openRpcDocument, type OpenRpcInfo } from './openrpc';
import { discoveryServers } from './openrpc-servers';
import type { GatewayOptions } from './options';

export interface BrokerOptions extends GatewayOptions {
  /** Namespace of the Warren cluster the broker fronts. @default 'warren' */
  readonly namespace?: string;
  /** Name of the broker's own Warren service, which answers `rpc.discover` over RabbitMQ. @default 'warren-broker' */
  readonly serviceName?: string;
  /** How often the broker's service announces itself. @default 10000 */
  readonly announceIntervalMs?: number;
  /**
   * The RabbitMQ user the broker connects as, when each process has its own (docs/security.md): its
   * service stamps replies with it (ServiceOptions.userId) and its clients' reply queues begin with it
   * (ClientOptions.clientIdPrefix), as `permissionsFor` expects. @default none
   */
  readonly userId?: string;
  /** Options of the broker's RPC client (namespace, logger and timeouts come from here). */
  readonly client?: Omit<ClientOptions, 'namespace' | 'logger' | 'defaultTimeoutMs'>;
  /** Title and version in the OpenRPC document. */
  readonly openrpc?: OpenRpcInfo;
  /** More methods the broker's own service serves over RabbitMQ (and so over HTTP), e.g. the in-flight view. @default none */
  readonly serviceMethods?: Readonly<Record<string, ServiceMethod>>;
  /** The broker's own methods (inflight.*, dlq.*) as MCP tools too, under the same authorization rule (broker-tools.ts). @default false */
  readonly brokerTools?: boolean;
  /** Notifications the broker's own service handles, e.g. `$/cancelRequest`. @default none */
  readonly serviceNotifications?: Readonly<Record<string, ServiceNotification>>;
}

/** A running broker: the gateway and what it stands on. */
export interface Broker {
  readonly gateway: Gateway;
  readonly connection: WireConnection;
  readonly client: RpcClient;
  readonly registry: ServiceRegistry;
  /** The broker's own Warren service (serves `rpc.discover` over RabbitMQ). */
  readonly service: WarrenService;
  /** Starts listening; resolves with the base URL. */
  listen(): Promise<string>;
  /**
   * Graceful shutdown, in order: stop accepting HTTP and finish in-flight
   * requests (MCP streams are closed), stop the discovery service, then the
   * registry, the client and (if the broker opened it) the connection.
   * Idempotent.
   */
  close(): Promise<void>;
}

/**
 * Starts the broker process's parts: one AMQP connection (or the one given),
 * the RPC client, the service registry, the `rpc.discover` service and the
 * HTTP gateway (not yet listening).
 *
 * @example
 * const broker = await startBroker({ urls: 'amqp://guest:guest@127.0.0.1:5672', port: 0 });
 * const url = await broker.listen();
 * // ... later
 * await broker.close();
 */
export async function startBroker(options: ConnectTo & BrokerOptions): Promise<Broker> {
  const logger = options.logger ?? silentLogger();
  const namespace = options.namespace ?? 'warren';
  const { connection, own } = openConnection(options, logger);
  const owned = own !== undefined;
  const cleanup: (() => Promise<void>)[] = [];
  try {
    if (own) {
      await own.start();
      cleanup.push(() => own.close());
    }
    const asUser = options.userId === undefined ? {} : { clientIdPrefix: options.userId };
    const client = await RpcClient.create(connection, { ...asUser, ...options.client, namespace, logger, defaultTimeoutMs: options.defaultTimeoutMs ?? 30_000 });
    cleanup.push(() => client.close());
    const registry = await ServiceRegistry.start(connection, { namespace, logger });
    cleanup.push(() => registry.close());
    const gateway = await buildGateway({ client, connection, registry }, { ...options, logger, probes: [...(options.probes ?? []), discoveryProbe(registry)] });
    cleanup.push(() => gateway.close());
    let listening: string | undefined;
    const servers = () => options.openrpc?.servers ?? discoveryServers(listening, 'urls' in options ? options.urls : undefined, namespace);
    const service = await startService({
      connection,
      namespace,
      name: options.serviceName ?? 'warren-broker',
      ...(options.userId === undefined ? {} : { userId: options.userId, client: asUser }),
      logger,
      metadata: { role: 'broker' },
      // dlq.list/show/replay/purge over every service's dead-letter queue (docs/gateway.md).
      methods: ownMethods(options.brokerTools === true, {
        ...dlqMethods({ queues: new DeadLetterQueues(connection, { namespace }), services: () => registry.list().map((i) => i.service) }),
        // workers.pause/resume/drain/cancelAll over the bus (docs/gateway-operators.md, "Worker controls").
        ...workerMethods({ connection, registry, namespace }),
        ...options.serviceMethods,
      }),
      notifications: options.serviceNotifications ?? {},
      ...(options.announceIntervalMs === undefined ? {} : { announceIntervalMs: options.announceIntervalMs }),
      // A short grace: rpc.discover answers from memory.
      shutdownGraceMs: 2000,
      reservedMethods: {
        'rpc.discover': {
          description: 'The OpenRPC document of every method served by the live Warren services.',
          handler: () => openRpcDocument(gateway.catalogue.current(), { ...options.openrpc, servers: servers() }),
        },
      },
    });
    cleanup.push(() => service.close());

    let closing: Promise<void> | undefined;
    return {
      gateway,
      connection,
      client,
      registry,
      service,
      listen: async () => (listening = await gateway.listen()),
      close() {
        closing ??= (async () => {
          // HTTP first, so nothing new arrives while what it stands on goes away.
          await gateway.close();
          await service.close();
          await registry.close();
          await client.close();
          if (owned) await connection.close();
        })();
        return closing;
      },
    };
  } catch (err) {
    for (const step of cleanup.reverse()) await step().catch(() => undefined);
    throw err;
  }
}

function ownMethods(tools: boolean, methods: Record<string, ServiceMethod>): Record<string, ServiceMethod> {
  return tools ? withBrokerTools(methods) : methods;
}

/** The connection given, or one of the broker's own (`own`, started and closed by the broker). */
function openConnection(options: ConnectTo & BrokerOptions, logger: NonNullable<BrokerOptions['logger']>): { connection: WireConnection; own: AmqpConnection | undefined } {
  if ('connection' in options) return { connection: options.connection, own: undefined };
  const own = new AmqpConnection({ ...connectionOptions(options), logger });
  return { connection: own, own };
}

function connectionOptions(options: ConnectionOptions & BrokerOptions): ConnectionOptions {
  const { urls, heartbeatSeconds, startTimeoutMs, socketTimeoutMs, reconnect, tls } = options;
  return {
    urls,
    connectionName: options.connectionName ?? 'warren-broker',
    ...(heartbeatSeconds === undefined ? {} : { heartbeatSeconds }),
    ...(startTimeoutMs === undefined ? {} : { startTimeoutMs }),
    ...(socketTimeoutMs === undefined ? {} : { socketTimeoutMs }),
    ...(reconnect === undefined ? {} : { reconnect }),
    ...(tls === undefined ? {} : { tls }),
  };
}
