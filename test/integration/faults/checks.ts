// The checks every scenario makes after its fault: nobody ran twice, every
// confirmed notification arrived at every subscriber, new calls succeed, and
// nothing is left behind (pending calls, buffered publishes, running
// handlers, extra consumers, timers).
import amqp from 'amqplib';
import type { AmqpConnection } from '@warren/amqp-transport';
import { amqpUrl, once, waitFor } from '@warren/testkit';
import type { CallRecord, NoteRecord } from './load';
import { Load, tally } from './load';
import { sinkServices, workService, type FaultRig } from './rig';

/**
 * Calls whose handler ran more than once, where a later run is not explained
 * by the death of the instance that ran the earlier one (`killed`). With
 * tracking, a redelivered call waits for its live first run or is answered
 * from its stored outcome; only a run whose worker died may be repeated.
 */
export async function repeatedRuns(rig: FaultRig, calls: readonly CallRecord[], killed: ReadonlySet<string> = new Set()): Promise<{ callId: string; runs: string[] }[]> {
  const runs = await rig.runs(calls.map((c) => c.callId));
  const bad: { callId: string; runs: string[] }[] = [];
  calls.forEach((c, i) => {
    const r = runs[i] ?? [];
    const unexplained = r.slice(0, -1).some((instance) => !killed.has(instance));
    if (unexplained || (c.outcome === 'ok' && r.length === 0)) bad.push({ callId: c.callId, runs: r });
  });
  return bad;
}

/** Every notification whose publish was confirmed reaches every subscribing service (at least once). */
export async function expectNotesDelivered(rig: FaultRig, notes: readonly NoteRecord[]): Promise<void> {
  const confirmed = notes.filter((n) => n.outcome === 'ok').map((n) => n.id);
  expect(confirmed.length).toBeGreaterThan(0);
  const missing = (): string[] => sinkServices.flatMap((s) => confirmed.filter((id) => !rig.received.get(s)?.has(id)).map((id) => `${s}:${id}`));
  await waitFor(() => missing().length === 0, { timeoutMs: 15_000, message: 'every confirmed notification at every sink' }).catch(() => undefined);
  expect(missing()).toEqual([]);
}

/** Consumers on a queue right now (-1 when it does not exist). */
export async function consumerCount(queue: string): Promise<number> {
  const model = await amqp.connect(amqpUrl());
  try {
    const ch = await model.createChannel();
    ch.on('error', () => undefined);
    return await ch.checkQueue(queue).then((q) => q.consumerCount, () => -1);
  } finally {
    await model.close().catch(() => undefined);
  }
}

/** Timers alive in this process (setTimeout/setInterval handles). */
export function activeTimers(): number {
  return process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
}

/**
 * Back to empty: the client's pending table, wire set and offline buffer,
 * every worker's running handlers; exactly one consumer per live instance on
 * each queue (a reconnect that doubled a consumer would show here); timers
 * back to where they were before the fault (within `timerSlack`).
 */
export async function expectQuiet(rig: FaultRig, timersBefore: number, o: { readonly serviceConsumers?: number; readonly timerSlack?: number } = {}): Promise<void> {
  const timerSlack = o.timerSlack ?? 3;
  const busy = (): string => JSON.stringify({ client: rig.client.stats(), running: rig.workers.map((w) => w.stats().running) });
  const quiet = (): boolean => {
    const s = rig.client.stats();
    return s.pending === 0 && s.onWire === 0 && s.buffered === 0 && rig.workers.every((w) => w.stats().running === 0);
  };
  await waitFor(quiet, { timeoutMs: 15_000, message: 'client and workers quiet' }).catch(() => undefined);
  expect(busy()).toBe(JSON.stringify({ client: { ...rig.client.stats(), pending: 0, buffered: 0, onWire: 0 }, running: rig.workers.map(() => 0) }));

  const expected: [string, number][] = [
    [rig.ns.names.serviceQueue(workService), o.serviceConsumers ?? rig.workers.length],
    [rig.client.replyQueue, 1],
    ...sinkServices.map((s): [string, number] => [rig.ns.names.serviceEventQueue(s), 1]),
  ];
  const counts = async (): Promise<[string, number][]> => Promise.all(expected.map(async ([q]): Promise<[string, number]> => [q, await consumerCount(q)]));
  await waitFor(async () => JSON.stringify(await counts()) === JSON.stringify(expected), { timeoutMs: 10_000, intervalMs: 200, message: 'one consumer per instance' }).catch(() => undefined);
  expect(await counts()).toEqual(expected);

  await waitFor(() => activeTimers() <= timersBefore + timerSlack, { timeoutMs: 10_000, intervalMs: 100 }).catch(() => undefined);
  expect(activeTimers()).toBeLessThanOrEqual(timersBefore + timerSlack);
}

/** After the fault, a fresh load of calls all succeed. */
export async function expectNewCallsSucceed(rig: FaultRig, total = 100): Promise<void> {
  const load = new Load(rig.client, { total, inflight: 20, timeoutMs: 8000, notifyEvery: 0, params: (i) => ({ ms: 1, n: i }) });
  await load.finished;
  expect(tally(load.calls)).toEqual({ ok: total });
}

/** The error a connection reports when it is lost; fails after `timeoutMs` rather than waiting out the test. */
export async function lostOnce(connection: AmqpConnection, timeoutMs = 10_000): Promise<Error> {
  const [err] = await once<[Error]>(connection, 'lost', timeoutMs);
  return err;
}
