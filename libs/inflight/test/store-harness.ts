// What the store's integration tests share: claim arguments and a stored result to feed the
// scripts against the real Redis.
import { ErrorCode } from '@warren/jsonrpc';
import { uniqueName } from '@warren/testkit';
import { encodeMeta } from '../src/record-codec';
import type { ClaimArgs } from '../src/store-port';

export const deadline = Date.now() + 60_000;
export const args = (over: Partial<ClaimArgs> = {}): ClaimArgs => ({
  token: uniqueName('tok'),
  worker: 'w1',
  meta: encodeMeta({ service: 'svc', method: 'work', deadline, rid: '7' }),
  attempt: 1,
  leaseMs: 5000,
  runningTtlMs: 20_000,
  maxAttempts: 3,
  finishedTtlMs: 30_000,
  workerLostCode: ErrorCode.WorkerLost,
  takeover: true,
  ...over,
});

export const result = (value: number): string => JSON.stringify({ jsonrpc: '2.0', result: value, id: 7 });
