// ctx.progress end to end on the real RabbitMQ and Redis: the caller's onProgress hears each report
// (throttled, the last one always), inflight.status and list show the latest on the record, a
// caller that did not ask gets no progress message, and the progress key carries a TTL.
import type { Progress, ServiceMethod } from '@warren/amqp';
import { waitFor } from '@warren/testkit';
import type { RpcClient } from '@warren/amqp';
import type { InflightView } from '../src/view';
import { TestBed, startCall } from './support';

const bed = new TestBed();
const { ns, tp } = bed;
const service = ns.service('prog');
let client: RpcClient;
let view: InflightView;
/** Releases the running `stepped` call, step by step. */
const gates: (() => void)[] = [];
const nextGate = (): Promise<void> => new Promise<void>((resolve) => gates.push(resolve));

const methods: Record<string, ServiceMethod> = {
  stepped: {
    handler: async (params, ctx) => {
      const { steps } = params as { steps: number };
      for (let i = 1; i <= steps; i++) {
        await nextGate();
        ctx.progress(i / steps, `step ${i} of ${steps}`);
      }
      return steps;
    },
  },
  // Reports many times in one tick: the throttle passes the first at once and the last at the end.
  burst: {
    handler: (_params, ctx) => {
      for (let i = 1; i <= 100; i++) ctx.progress(i / 100, `burst ${i}`);
      return 'ok';
    },
  },
};

beforeAll(async () => {
  ({ client, view } = await bed.start());
  await bed.trackedService(service, { prefetch: 4, methods, tracker: { heartbeatMs: 100 } });
});
afterAll(() => bed.close());

async function release(): Promise<void> {
  await waitFor(() => gates.length > 0, { message: 'handler waiting at its gate' });
  gates.shift()?.();
}

it('pushes progress to a caller that asks, and keeps the latest on the in-flight record', async () => {
  const seen: Progress[] = [];
  const { callId, answer } = startCall<number>(client, 'stepped', { steps: 3 }, { onProgress: (p) => seen.push(p) });
  await release();
  await waitFor(() => seen.length >= 1, { message: 'first progress heard' });
  expect(seen[0]).toMatchObject({ fraction: 1 / 3, message: 'step 1 of 3' });
  await waitFor(async () => (await view.status(callId)).progress?.message === 'step 1 of 3', { message: 'progress on the record' });
  const status = await view.status(callId);
  expect(status).toMatchObject({ state: 'running', progress: { fraction: 1 / 3, message: 'step 1 of 3' } });
  expect(status.progress?.at).toBeGreaterThan(0);
  await waitFor(async () => (await view.list({ service })).some((c) => c.callId === callId && c.progress?.message === 'step 1 of 3'), { message: 'progress in the list' });

  const progressKey = (await tp.keys()).find((k) => k.includes(':progress:'));
  expect(progressKey).toBeDefined();
  expect(await tp.redis.pttl(progressKey as string)).toBeGreaterThan(0);

  await release();
  await release();
  await expect(answer).resolves.toBe(3);
  // Every report reached the caller before the answer did, the last one included.
  expect(seen.at(-1)).toMatchObject({ fraction: 1, message: 'step 3 of 3' });
  expect(seen.map((p) => p.fraction)).toEqual([...seen.map((p) => p.fraction)].sort((a, b) => a - b));
});

it('throttles a burst of reports to a few, always delivering the last one before the answer', async () => {
  const seen: Progress[] = [];
  await expect(client.call('burst', {}, { onProgress: (p) => seen.push(p) })).resolves.toBe('ok');
  expect(seen.length).toBeGreaterThanOrEqual(2);
  expect(seen.length).toBeLessThan(10);
  expect(seen[0]?.message).toBe('burst 1');
  expect(seen.at(-1)?.message).toBe('burst 100');
});

it('sends no progress message to a caller that did not ask (its call still succeeds)', async () => {
  const { callId, answer } = startCall<number>(client, 'stepped', { steps: 1 });
  await release();
  await expect(answer).resolves.toBe(1);
  expect(client.stats().lateReplies).toBe(0);
  // Stored all the same: progress on the record does not depend on a listener.
  const status = await view.status(callId);
  expect(status.state).toBe('done');
});
