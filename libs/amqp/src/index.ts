import { AmqpConnection, type ConnectionOptions, type WireConnection } from '@warren/amqp-transport';
import { RpcClient } from './engine/client';
import type { ClientOptions } from './engine/client-options';
import { explainReturnedRequests } from './discovery/returned-requests';
import { WarrenService } from './runtime/service';
import type { ServiceOptions } from './runtime/service-options';

/** Where to connect: an existing connection to share, or the options to open one of its own. */
export type ConnectTo = { readonly connection: WireConnection } | ConnectionOptions;

async function open(to: ConnectTo, logger: ClientOptions['logger']): Promise<{ connection: WireConnection; owned: boolean }> {
  if ('connection' in to) return { connection: to.connection, owned: false };
  const connection = new AmqpConnection({ ...to, ...(to.logger || !logger ? {} : { logger }) });
  await connection.start();
  return { connection, owned: true };
}

/**
 * Connects a client. Pass `urls` (and connection options) to open a
 * connection it owns, or `connection` to share one. A request RabbitMQ returns
 * for a method a live service announces fails -32002 (`queue_unavailable`), not
 * -32601 (discovery/returned-requests.ts; nothing runs until a request is returned).
 *
 * @example
 * const client = await connectClient({ urls: 'amqp://guest:guest@127.0.0.1:5672' });
 * await client.call('add', [4, 5]); // 9
 * await client.close();
 */
export async function connectClient(options: ConnectTo & ClientOptions): Promise<RpcClient> {
  const { connection, owned } = await open(options, options.logger);
  try {
    const client = await RpcClient.create(connection, options, owned);
    explainReturnedRequests(client, connection, options.logger ? { logger: options.logger } : {});
    return client;
  } catch (err) {
    if (owned) await connection.close();
    throw err;
  }
}

/**
 * Starts a service instance.
 *
 * @example
 * const service = await startService({ urls, name: 'calculator',
 *   methods: { add: { handler: ([a, b]: number[]) => a + b } } });
 * await service.close();
 */
export async function startService(options: ConnectTo & ServiceOptions): Promise<WarrenService> {
  const { connection, owned } = await open(options, options.logger);
  try {
    return await WarrenService.start(connection, options, owned);
  } catch (err) {
    if (owned) await connection.close();
    throw err;
  }
}

// The package's face: what services, the broker, the CLI, other libs, examples and the bench use
// (README "Exports"). Tests reach everything else through source paths (`../src/...`).
export type { DelayOptions } from './engine/delay-options';
export { maxDelayMs } from './wire/delay';
export { RpcClient } from './engine/client';
export type { CallOptions, NotifyOptions } from './engine/call-options';
export type { EnqueueOptions, EnqueuedJob } from './engine/enqueue';
export type { ClientOptions } from './engine/client-options';
export { relayPayload, type RelayTarget } from './engine/relay';
export { WarrenService } from './runtime/service';
export type { ServiceOptions, ServiceMethod, ServiceNotification } from './runtime/service-options';
export type { CallTracker } from '@warren/calls';
export type { ScheduleDeclaration } from './wire/schedule-declaration';
export { defineMethod, defineNotification, NoParams } from './runtime/define-method';
export type { HandlerContext } from './runtime/context';
export { RetryableError } from './runtime/retry';
export { names, type Names } from './wire/names';
export { permissionsFor, setPermissionsLine } from './wire/permissions';
export type { QueueType } from './wire/topology';
export { DeadLetterQueues, type DeadLetter, type DeadLetterDetail } from './dead-letters/dead-letter-queues';
export type { Progress, ProgressListener } from './wire/progress';
export { traced } from './tracing/traced';
export type { MethodDescription, NotificationDescription } from './discovery/announcement';
export { protocolSchemaFiles } from './wire/protocol-schemas';
export { ServiceRegistry, summarizeInstance, type InstanceInfo, type InstanceSummary } from './discovery/registry';
export { recordAnnounced, type DirectoryEntry } from './discovery/directory';
export { AvailabilityGate, QueueDepths, guardAvailability, type QueueDepth } from './discovery/availability';
export { announcedMethods, nearMethods, noRouteHint } from './discovery/no-route-hint';
export { asUser, readServiceEnv, positiveIntFromEnv, type ServiceEnv, type Env } from './runtime/service-env';
export { readMainSettings } from './runtime/main-settings';
export { runServiceMain, type RunningService, type StartHooks } from './runtime/service-main';
export { shutdownHandler } from './runtime/shutdown';
export { drainedExitCode, watchSupervisor } from './runtime/supervisor-watch';
export { startWatchdog } from './runtime/watchdog';
export { publishWorkerControl, type WorkerAction, type WorkerReport } from './wire/worker-control';
