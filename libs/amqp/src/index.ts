import { AmqpConnection, type ConnectionOptions } from './connection';
import { RpcClient } from './client';
import type { ClientOptions } from './client-options';
import { WarrenService } from './service';
import type { ServiceOptions } from './service-options';

/** Where to connect: an existing connection to share, or the options to open one of its own. */
export type ConnectTo = { readonly connection: AmqpConnection } | ConnectionOptions;

async function open(to: ConnectTo, logger: ClientOptions['logger']): Promise<{ connection: AmqpConnection; owned: boolean }> {
  if ('connection' in to) return { connection: to.connection, owned: false };
  const connection = new AmqpConnection({ ...to, ...(to.logger || !logger ? {} : { logger }) });
  await connection.start();
  return { connection, owned: true };
}

/**
 * Connects a client. Pass `urls` (and connection options) to open a
 * connection it owns, or `connection` to share one.
 *
 * @example
 * const client = await connectClient({ urls: 'amqp://guest:guest@127.0.0.1:5672' });
 * await client.call('add', [4, 5]); // 9
 * await client.close();
 */
export async function connectClient(options: ConnectTo & ClientOptions): Promise<RpcClient> {
  const { connection, owned } = await open(options, options.logger);
  try {
    return await RpcClient.create(connection, options, owned);
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

export { AmqpConnection, type ConnectionOptions, type ConnectionState, type TlsOptions, type OnOpen } from './connection';
export { type BackoffOptions, backoffDelay, defaultBackoff } from './backoff';
export { RpcClient, type CallOptions, type NotifyOptions, type BatchEntry, type BatchResult, type RpcProxy, type ClientStats, type CancelListener, type SendListener, type SentCall } from './client';
export { type ClientOptions, resolveClientOptions } from './client-options';
export { WarrenService } from './service';
export { type ServiceOptions, type ServiceMethod, type ServiceNotification, type ToolSpec, resolveServiceOptions } from './service-options';
export type { ServiceStats } from './service-stats';
export type { HandlerContext, NestedClient } from './context';
export { trackingStates, type CallTracker, type TrackedCall, type TrackDecision, type TrackingReport } from './tracker';
export type { Abortable } from './call-abort';
export { SuspectLane, type Isolation } from './suspect-lane';
export { effectKey, maxEffectName, type EffectLedger, type EffectStart, type OnceOptions, type OnceResult } from './once';
export { names, assertMethodName, isValidMethodName, type Names } from './names';
export { coreTopology, serviceTopology, applyTopology, type Topology, type QueueType } from './topology';
export { Header } from './headers';
export { RetryableError, isRetryable, retryDelayMs, retryDelays, planRetry, maxRetryAttempts, type RetryPolicy, type RetryPlan } from './retry';
export { DeadLetterQueues, type DeadLetter, type DeadLetterDetail, type DeadLetterOptions } from './dead-letters';
export { DeadHeader, type DeadLetterReason } from './dead-letter';
export { progressHeader, decodeProgress, type Progress, type ProgressListener } from './progress';
export { directReplyQueue, type ReplyMode } from './reply-consumer';
export { parseTraceparent, childTraceparent, type TraceContext } from './trace';
export { relayPayload, type RelayOptions, type RelayTarget } from './relay';
export { type Announcement, type AnnounceMessage, type WithdrawMessage, type AnnouncementParse, type MethodDescription, type NotificationDescription, type ErrorDescription, parseAnnouncement, maxAnnouncementBytes } from './announcement';
export { type AnnounceNowRequest, parseAnnounceNow } from './announce-now';
export { announcementSchema, announceNowSchema, protocolSchemaFiles, protocolVersion, jsonSchemaDraft } from './protocol-schemas';
export { ServiceRegistry, summarizeInstance, type InstanceInfo, type InstanceSummary, type RegistryOptions } from './registry';
export { readServiceEnv, positiveIntFromEnv, type ServiceEnv, type Env } from './service-env';
export { shutdownHandler, type ShutdownOptions } from './shutdown';
export { AvailabilityGate, QueueDepths, guardAvailability, registryDirectory, type AvailabilityOptions, type AvailabilityVerdict, type MethodDirectory, type QueueDepth } from './availability';
