// inflight.cancel records the cancel in the store BEFORE it publishes the wire cancel: a worker that
// hears the wire cancel first stores `cancelled` itself, and the operator's own cancel then read as
// someone else's ("already-cancelled", issue 27 bug 3).
import { ErrorCode } from '@warren/jsonrpc';
import { encodeMeta } from '../src/record-codec';
import { inflightMethods } from '../src/methods';
import { memoryInflightView } from '../src/memory';
import { connectMemory } from '../src/memory-handle';
import { MemoryInflightStore } from '../src/memory-store';
import type { CallStatus } from '../src/record-codec';

it('writes the cancel to the store before telling the wire', async () => {
  const memory = new MemoryInflightStore();
  const store = connectMemory(memory);
  const meta = encodeMeta({ service: 'svc', method: 'work', deadline: Date.now() + 60_000, rid: '7' });
  await store.claim('c1', { token: 't1', worker: 'w1', meta, attempt: 1, leaseMs: 5000, runningTtlMs: 20_000, maxAttempts: 2, finishedTtlMs: 30_000, workerLostCode: ErrorCode.WorkerLost, takeover: false });
  const view = memoryInflightView(memory);
  let seenByWire: CallStatus | undefined;
  const methods = inflightMethods(view, { cancelOnWire: async (id) => { seenByWire = await view.status(id); } });
  const cancel = methods['inflight.cancel'];
  if (!cancel) throw new Error('no inflight.cancel');
  expect(await cancel.handler({ callId: 'c1' }, undefined as never)).toEqual({ outcome: 'signalled', worker: 'w1' });
  await new Promise((resolve) => setImmediate(resolve));
  expect(seenByWire).toMatchObject({ state: 'running', cancelRequested: true });
  await view.close();
});
