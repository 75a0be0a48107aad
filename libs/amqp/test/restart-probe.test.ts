// The restart probe's rule (engine/restart-probe.ts) over stub channels: what the probe queue looks like at a
// reconnect, and what the calls on the wire fail with. A real broker restart is the restart stage's
// (test/restart/broker-restart.test.ts); a real connection drop, amqp/rpc › "connection loss".
import type { WireChannel, WireModel, WireQueueInfo } from '@warren/amqp-transport';
import { RestartProbe } from '../src/engine/restart-probe';
import { names } from '../src/wire/names';

type Queues = Record<string, Omit<WireQueueInfo, 'queue'>>;

/** A model whose channels see `queues` (a missing one fails its passive declare, as a 404 would), and count marker publishes. */
function broker(queues: Queues): { model: WireModel; markers: string[] } {
  const markers: string[] = [];
  const channel = (): WireChannel & { waitForConfirms(): Promise<void> } => ({
    on: () => undefined,
    close: () => Promise.resolve(),
    checkQueue: (q: string) => (queues[q] ? Promise.resolve({ queue: q, ...queues[q] }) : Promise.reject(Object.assign(new Error('NOT_FOUND'), { code: 404 }))),
    assertQueue: (q: string) => Promise.resolve({ queue: q, ...(queues[q] ?? { messageCount: 0, consumerCount: 0 }) }),
    consume: () => Promise.resolve({ consumerTag: 't' }),
    publish: (_e: string, q: string) => (markers.push(q), true),
    waitForConfirms: () => Promise.resolve(),
  }) as unknown as WireChannel & { waitForConfirms(): Promise<void> };
  const model = { createChannel: () => Promise.resolve(channel()), createConfirmChannel: () => Promise.resolve(channel()) } as unknown as WireModel;
  return { model, markers };
}

const n = names('probe-test');
const reply = n.replyQueue('c-1');
const probeQueue = n.replyProbeQueue('c-1');
const probe = (): RestartProbe => new RestartProbe(n, () => 'c-1', 60_000);

/** A probe armed by an open on a fresh queue (the marker put in). */
async function armed(): Promise<RestartProbe> {
  const p = probe();
  const { model, markers } = broker({});
  await p.open(model);
  expect(markers).toEqual([probeQueue]);
  return p;
}

describe('RestartProbe', () => {
  it('takes a requeued marker (the connection dropped, the broker kept running) for no restart', async () => {
    const { model } = broker({ [reply]: { messageCount: 0, consumerCount: 0 }, [probeQueue]: { messageCount: 1, consumerCount: 0 } });
    expect(await (await armed()).lost(model)).toBeUndefined();
  });

  it('takes an old consumer still holding the marker (a half-open connection the broker has not closed yet) for no restart', async () => {
    const { model } = broker({ [reply]: { messageCount: 0, consumerCount: 1 }, [probeQueue]: { messageCount: 0, consumerCount: 1 } });
    expect(await (await armed()).lost(model)).toBeUndefined();
  });

  it('takes a marker gone with no consumer left for a restart: the calls on the wire fail -32007 broker_restarted', async () => {
    const { model } = broker({ [reply]: { messageCount: 0, consumerCount: 0 }, [probeQueue]: { messageCount: 0, consumerCount: 0 } });
    expect(await (await armed()).lost(model)).toMatchObject({ code: 'RPC_CONNECTION_LOST', reason: 'broker_restarted' });
  });

  it('concludes nothing from a probe it never armed (its marker could not be published), nor from a missing probe', async () => {
    const empty = broker({ [reply]: { messageCount: 0, consumerCount: 0 }, [probeQueue]: { messageCount: 0, consumerCount: 0 } });
    expect(await probe().lost(empty.model)).toBeUndefined();
    const missing = broker({ [reply]: { messageCount: 0, consumerCount: 0 } });
    expect(await (await armed()).lost(missing.model)).toBeUndefined();
  });

  it('fails the calls on the wire -32007 reply_queue_lost when the reply queue itself is gone (expired)', async () => {
    const { model } = broker({});
    expect(await (await armed()).lost(model)).toMatchObject({ code: 'RPC_REPLY_QUEUE_LOST' });
  });

  it('puts no second marker in a probe that still holds one', async () => {
    const { model, markers } = broker({ [probeQueue]: { messageCount: 1, consumerCount: 0 } });
    await probe().open(model);
    expect(markers).toEqual([]);
  });
});
