import { AmqpConnection, type ConnectionOptions, type WireConnection } from '@warren/amqp-transport';
import { RpcClient } from './engine/client';
import type { ClientOptions } from './engine/client-options';
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

export { type DelayOptions } from './engine/delay-options';
export type { AvailabilityVerdict } from './engine/availability-verdict';
export { delayLevels, maxDelayMs, delayLevelsOf, DelayHeader, type DelayTarget } from './wire/delay';
export { RpcClient, type CallOptions, type NotifyOptions, type BatchEntry, type BatchResult, type RpcProxy, type ClientStats, type CancelListener, type SendListener, type SentCall } from './engine/client';
export { type ClientOptions, resolveClientOptions } from './engine/client-options';
export { replyUsersOf, type ReplyUsers, type TrustedService } from './engine/reply-users';
export { WarrenService } from './runtime/service';
export { type ServiceOptions, type ServiceMethod, type ServiceNotification, resolveServiceOptions } from './runtime/service-options';
export type { ErrorDescription, ToolSpec } from './wire/method-declarations';
export type { ScheduleDeclaration } from './wire/schedule-declaration';
export { defineMethod, defineNotification, jsonSchemaOf, NoParams, type MethodSpec, type TypedHandler } from './runtime/define-method';
export type { ServiceStats } from './runtime/service-stats';
export type { HandlerContext, NestedClient } from './runtime/context';
export {
  trackingStates, outcomeOf, type CallTracker, type CallInfo, type RunningCall, type RunInfo, type Executed, type TrackedOutcome, type Settle,
  type DeadLetterSettle, type TrackingReport,
} from './runtime/tracker';
export type { Abortable } from './runtime/call-abort';
export { SuspectLane, type Isolation } from './runtime/suspect-lane';
export { effectKey, maxEffectName, type EffectLedger, type EffectStart, type OnceOptions, type OnceResult } from './runtime/once';
export { names, assertMethodName, isValidMethodName, type Names } from './wire/names';
export { permissionsFor, setPermissionsArgs, setPermissionsLine, type Permissions, type Role } from './wire/permissions';
export { coreTopology, serviceTopology, applyTopology, type Topology, type QueueType } from './wire/topology';
export { Header } from './wire/headers';
export { RetryableError, isRetryable, retryDelayMs, retryDelays, planRetry, maxRetryAttempts, type RetryPolicy, type RetryPlan } from './runtime/retry';
export { DeadLetterQueues, type DeadLetter, type DeadLetterDetail, type DeadLetterOptions } from './jobs/dead-letters';
export { DeadHeader, type DeadLetterReason } from './wire/dead-letter';
export { progressHeader, decodeProgress, type Progress, type ProgressListener } from './wire/progress';
export { directReplyQueue, type ReplyMode } from './engine/reply-consumer';
export { parseTraceparent, childTraceparent, validTracestate, type TraceContext } from './wire/trace';
export { traced, type TraceOptions, type IncomingTrace } from './tracing/traced';
export { WarrenAttr, WarrenEvent } from './tracing/call-spans';
export { relayPayload, type RelayOptions, type RelayTarget } from './engine/relay';
export { type Announcement, type AnnounceMessage, type WithdrawMessage, type AnnouncementParse, type MethodDescription, type NotificationDescription, parseAnnouncement, maxAnnouncementBytes } from './discovery/announcement';
export { type AnnounceNowRequest, parseAnnounceNow } from './discovery/announce-now';
export { announcementSchema, announceNowSchema, protocolSchemaFiles, protocolVersion, jsonSchemaDraft } from './wire/protocol-schemas';
export { ServiceRegistry, summarizeInstance, type InstanceInfo, type InstanceSummary, type RegistryOptions } from './discovery/registry';
export { asUser, readServiceEnv, positiveIntFromEnv, opsFromEnv, type ServiceEnv, type OpsEnv, type Env } from './runtime/service-env';
export { startOpsServer, defaultOpsHost, type OpsServer, type OpsServerOptions, type OpsAnswer } from './runtime/ops-server';
export { shutdownHandler, type ShutdownHandler, type ShutdownOptions } from './runtime/shutdown';
export { runServiceMain, type MainProcess, type RunningService, type ServiceMainOptions, type StartHooks } from './runtime/service-main';
export { WorkerMetrics, type WorkerMetricsOptions, type WorkerMetricsSources } from './runtime/worker-metrics';
export type { ServiceObserver, SettledRequest, RequestOutcome } from './runtime/service-observer';
export { watchSupervisor, type SupervisorWatch } from './runtime/supervisor-watch';
export { DirectoryRecorder, recordAnnounced, directoryRefreshMs, type AnnouncedServices, type DirectoryRecorderLog, type DirectoryEntry, type DirectoryMethod, type DirectoryReader, type DirectoryWriter } from './discovery/directory';
export { AvailabilityGate, QueueDepths, guardAvailability, registryDirectory, type AvailabilityOptions, type MethodDirectory, type QueueDepth } from './discovery/availability';
export { publishWorkerControl, workerActions, type AppliedControl, type WorkerAction, type WorkerReport } from './wire/worker-control';
export type { WorkerControls } from './runtime/worker-controls';
