/**
 * The Lua scripts behind every state change of a call. One script per
 * transition, each atomic. Each touches one call's key (or the two worker
 * keys, which share a hash tag); the two on the hot path, claim and finish,
 * take a batch of calls, which on Redis Cluster is always a batch of one, so
 * every script stays in one slot there. They take the time from Redis itself
 * (TIME), so leases are judged on one clock however skewed the workers'
 * clocks are.
 *
 * A call record is one string, its fields joined by U+001F (see
 * `recordFields` in record-codec.ts): a string is written with its TTL in one `SET ... NX PX`,
 * where a hash needs HSETNX, HSET and PEXPIRE. Per tracked call that is two
 * commands instead of six, and about 40 % less Redis CPU (docs/benchmarks.md).
 * The state is one letter: R running, Q queued, W retrying, D done, F failed,
 * C cancelled, E expired. A live record (R, Q, W) always ends in three empty
 * fields (code, finishedAt, result), which `finish` fills in without parsing
 * the rest; JSON text never holds a raw U+001F, and meta is checked not to.
 */

import { markIndex, liveMarks, cancel } from './cancel-scripts';
import { historyAddLua } from './history-script';
import { delayedAdd, delayedList, waitingAdd, waitingList } from './list-scripts';
import { effectComplete, effectForget, effectStart } from './once-scripts';
import { unmarkQueued } from './queued-script';
import { claim, finish, progress, record, release, renew, retrying } from './record-scripts';
import { goodbye, heartbeat, workers } from './worker-scripts';

export const scripts = {
  // The batched scripts take the number of keys as their first argument.
  inflightClaim: { lua: claim },
  inflightFinish: { lua: finish },
  // The same, one call each, for Redis Cluster: ioredis routes (and auto-pipelines) a custom command
  // by its first argument, which must then be the key, not the count.
  inflightClaimOne: { numberOfKeys: 1, lua: claim },
  inflightFinishOne: { numberOfKeys: 1, lua: finish },
  inflightRecord: { numberOfKeys: 1, lua: record },
  inflightHistoryAdd: { numberOfKeys: 1, lua: historyAddLua },
  inflightRelease: { numberOfKeys: 1, lua: release },
  inflightRenew: { numberOfKeys: 1, lua: renew },
  inflightWaitingAdd: { numberOfKeys: 1, lua: waitingAdd },
  inflightWaitingList: { numberOfKeys: 1, lua: waitingList },
  inflightUnmarkQueued: { numberOfKeys: 1, lua: unmarkQueued },
  inflightDelayedAdd: { numberOfKeys: 2, lua: delayedAdd },
  inflightDelayedList: { numberOfKeys: 2, lua: delayedList },
  inflightRetrying: { numberOfKeys: 2, lua: retrying },
  inflightCancel: { numberOfKeys: 1, lua: cancel },
  inflightMarkIndex: { numberOfKeys: 1, lua: markIndex },
  inflightLiveMarks: { numberOfKeys: 1, lua: liveMarks },
  inflightProgress: { numberOfKeys: 3, lua: progress },
  inflightHeartbeat: { numberOfKeys: 2, lua: heartbeat },
  inflightGoodbye: { numberOfKeys: 2, lua: goodbye },
  inflightWorkers: { numberOfKeys: 2, lua: workers },
  inflightEffectStart: { numberOfKeys: 1, lua: effectStart },
  inflightEffectComplete: { numberOfKeys: 1, lua: effectComplete },
  inflightEffectForget: { numberOfKeys: 1, lua: effectForget },
} as const;

export type ScriptName = keyof typeof scripts;
