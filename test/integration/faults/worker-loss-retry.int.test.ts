// A worker SIGKILLed mid-call when the method has a retry policy: the call is
// not taken over at once but waits out the policy's backoff in a RabbitMQ delay
// queue (no timer in any process), its record saying `retrying` with the
// attempt and the next try time, listed by inflight.list meanwhile; then a
// survivor takes it over (its first crash: beside other work) as attempt 2, and the
// caller gets its answer. With no time left before the deadline for the wait,
// the call is taken over at once, as without a policy.
import amqp from 'amqplib';
import { InflightView, type InflightCall } from '@warren/inflight';
import { Teardown, amqpUrl, redisUrl, waitFor } from '@warren/testkit';
import { queueDepth } from '../../support/amqp';
import { FaultRig, workMethod, workService } from './rig';

const td = new Teardown();
afterAll(() => td.run());

const policy = { attempts: 3, backoffMs: 1500 };

async function deleteQueues(queues: readonly string[]): Promise<void> {
  const model = await amqp.connect(amqpUrl());
  try {
    const ch = await model.createChannel();
    for (const q of queues) await ch.deleteQueue(q);
  } finally {
    await model.close();
  }
}

it('a worker killed mid-call under a retry policy: the call waits in the delay queue (retrying, listed), then a survivor takes it over as attempt 2', async () => {
  const rig = await FaultRig.start(td, { workers: 0, leaseMs: 1000, prefetch: 4, retry: policy });
  td.add(() => deleteQueues([1500, 3000].map((ms) => rig.ns.names.retryQueue(workService, ms))));
  const view = new InflightView({ redis: redisUrl(), keyPrefix: rig.prefix });
  td.add(() => view.close());
  const victim = await rig.spawnWorker('v0');

  const callId = rig.client.nextCallId();
  const answer = rig.client.call(workMethod, { ms: 4000, n: 21 }, { id: callId, timeoutMs: 60_000 });
  await waitFor(async () => (await rig.runs([callId]))[0]?.length === 1, { timeoutMs: 20_000, message: 'the victim runs the call' });
  const survivor = await rig.addWorker('s1');
  await victim.kill('SIGKILL');

  // Once the victim's lease runs out, the survivor's claim sends the call to wait rather than taking it over.
  let listed: InflightCall | undefined;
  await waitFor(async () => {
    listed = (await view.list({ service: workService })).find((c) => c.callId === callId);
    return listed?.state === 'retrying';
  }, { timeoutMs: 20_000, intervalMs: 25, message: 'listed as retrying' });
  const status = await view.status(callId);
  expect(status).toMatchObject({ state: 'retrying', attempt: 1, worker: 'v0' });
  expect(listed).toMatchObject({ callId, state: 'retrying', attempt: 1, worker: 'v0', method: workMethod });
  expect(listed?.nextTryAt).toBe(status.nextTryAt);
  // Nothing ran while it waited: the wait is the delay queue's, for the policy's first backoff.
  expect(await rig.runs([callId])).toEqual([['v0']]);
  const waiting = rig.ns.names.retryQueue(workService, policy.backoffMs);
  await waitFor(async () => (await queueDepth(waiting)) === 1 || (await view.status(callId)).state !== 'retrying', { message: 'the request in the delay queue' });

  await expect(answer).resolves.toBe(42);
  expect(await rig.runs([callId])).toEqual([['v0', 's1']]);
  await expect(view.status(callId)).resolves.toMatchObject({ state: 'done', attempt: 2, worker: 's1' });
  // Taken over after its wait (a suspect still, in its first crash: in the crowd, not alone), and no longer listed.
  expect(rig.trackers[0]?.health()).toMatchObject({ delayedAfterLoss: 1, takeovers: 1, isolated: 0 });
  expect((await view.list({ service: workService })).some((c) => c.callId === callId)).toBe(false);
  expect(survivor.stats().retried).toBe(1);
  expect(await queueDepth(waiting)).toBe(0);
}, 120_000);

it('with no time left for the wait before the deadline, a lost worker\'s call is taken over at once', async () => {
  const rig = await FaultRig.start(td, { workers: 0, leaseMs: 1000, prefetch: 4, retry: { attempts: 3, backoffMs: 30_000 } });
  td.add(() => deleteQueues([30_000, 60_000].map((ms) => rig.ns.names.retryQueue(workService, ms))));
  const victim = await rig.spawnWorker('v1');
  const callId = rig.client.nextCallId();
  const answer = rig.client.call(workMethod, { ms: 3000, n: 5 }, { id: callId, timeoutMs: 25_000 });
  await waitFor(async () => (await rig.runs([callId]))[0]?.length === 1, { timeoutMs: 20_000, message: 'the victim runs the call' });
  await rig.addWorker('s2');
  await victim.kill('SIGKILL');

  await expect(answer).resolves.toBe(10);
  expect(await rig.runs([callId])).toEqual([['v1', 's2']]);
  expect(rig.trackers[0]?.health()).toMatchObject({ delayedAfterLoss: 0, takeovers: 1 });
}, 120_000);
