/**
 * @warren/inflight — in-flight calls in Redis: one view of the cluster, no
 * lost or doubled work. A {@link StoreCallTracker} plugs into a Warren service
 * (`tracker` option); an {@link InflightView} lists, looks up and cancels
 * calls. See README.md for the key layout and the error table.
 */
export { StoreCallTracker } from './call-tracker';
export { createRedisTracker } from './redis-tracker';
export { RedisDirectory, parseEntry as parseDirectoryEntry, type DirectoryOptions, type MethodEntry, type RecordedMethod } from './directory';
export { InflightView, type InflightCall, type CancelOutcome, type QueuedCall, type CallDetail, type PastAttempt } from './view';
export { type HistoryQuery, type HistoryItem, type HistoryPage, type RelayedOutcome, maxHistoryPage } from './history';
export { DelayedCalls, trackDelayed, maxDelayedListed, type DelayedCall, type DelayedEntry, type DelayedCancel } from './delayed';
export { cancelOnAbort, callWithRecovery, trackQueued, type RecoveryOptions, type TrackQueuedOptions } from './client';
export { inflightMethods, inflightNotifications, delayedMethods } from './methods';
export { type TrackerHealth, type TrackingState } from './health';
export {
  type TrackerOptions, type ViewOptions, type StoreOptions, type RedisConfig, trackerDefaults, viewDefaults,
  resolveTrackerOptions, resolveViewOptions, DEFAULT_REDIS_URL,
} from './options';
export { type CallState, type CallStatus, type CallProgress, type WorkerInfo } from './record-codec';
export { keys, directoryTtlMs, historyBounds, type Keys, type HistoryBounds, type HistoryKind } from './keys';
export {
  InflightError, InflightUnavailableError, ResultTimeoutError, InflightClosedError, InflightErrorCode, type InflightErrorCodeValue,
} from './errors';
export type { TrackerStore, ViewStore } from './store-port';
export { MemoryInflightStore } from './memory-store';
export { createMemoryTracker, memoryInflightView } from './memory';
