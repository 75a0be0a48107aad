/**
 * @warren/inflight — in-flight calls in Redis: one view of the cluster, no
 * lost or doubled work. `createRedisTracker` makes the tracker a Warren
 * service takes (`tracker` option); an {@link InflightView} lists, looks up
 * and cancels calls. See README.md ("Exports") for what each name is for,
 * the key layout and the error table. Only what is used outside the package
 * is exported: its own tests import source paths.
 */
// Workers: the tracker, over Redis or (embedded mode) over memory.
export { createRedisTracker } from './redis-tracker';
export { createMemoryTracker, memoryInflightView } from './memory';
export { MemoryInflightStore } from './memory-store';
export type { StoreCallTracker } from './call-tracker';
export type { TrackerOptions } from './options';
// Operators and callers: the view, the method directory, and the client helpers.
export { InflightView, type InflightCall, type CancelOutcome, type CallDetail, type PastAttempt } from './view';
export type { HistoryItem, HistoryPage } from './history';
export type { CallState, CallStatus } from './record-codec';
export { RedisDirectory } from './directory';
export { cancelOnAbort, callWithRecovery, trackQueued, type QueuedMarks } from './client';
export { trackDelayed, type DelayedCall } from './delayed';
export { inflightJobStore } from './job-store';
// The view over JSON-RPC (the broker serves these).
export { inflightMethods, inflightNotifications, delayedMethods } from './methods';
export { InflightError } from './errors';
// Readiness: a Redis PING for the broker's /readyz.
export { redisPing } from './redis-ping';
export { PrefixKeys } from './prefix-keys';
