// Dead-letter triage on the real RabbitMQ (docs/gateway-operators.md, "Dead letters"): dlq.list filters by
// reason and method, dlq.show gives a dead letter's AMQP properties and headers (x-death's dates as
// ISO strings), and dlq.replay of several ids replays exactly those, pairing each with its new call
// id and naming the ones no longer there; each replayed call runs once.
import { RetryableError, startService, connectClient } from '@warren/amqp';
import { Teardown, amqpUrl, waitFor } from '@warren/testkit';
import { TestNamespace, publishRaw } from '../../test/support/amqp';
import { startBroker } from '../src';
import { postRpc } from './support';

const td = new Teardown();
afterAll(() => td.run());
const ns = new TestNamespace();
const service = ns.service('triage');
let url: string;
let healed = false;
const ran = new Map<string, number>();

type Letter = { id: string; method: string; reason: string; callId: string };

async function rpc<T>(method: string, params: unknown): Promise<{ result?: T; error?: { code: number; data?: unknown } }> {
  return (await (await postRpc(url, JSON.stringify({ jsonrpc: '2.0', method, params, id: 1 }))).json()) as { result?: T; error?: { code: number; data?: unknown } };
}

beforeAll(async () => {
  td.add(() => ns.destroy());
  ns.queue(ns.names.retryQueue(service, 100));
  const broker = await startBroker({ urls: amqpUrl(), namespace: ns.namespace, serviceName: ns.service('warren-broker'), port: 0, defaultMetrics: false });
  td.add(() => broker.close());
  url = await broker.listen();
  const worker = await startService({
    urls: amqpUrl(), namespace: ns.namespace, name: service,
    methods: {
      'triage.boom': {
        retry: { attempts: 2, backoffMs: 100 },
        handler: (p) => {
          const { key } = p as { key: string };
          ran.set(key, (ran.get(key) ?? 0) + 1);
          if (!healed) throw new RetryableError('not yet');
          return key;
        },
      },
    },
  });
  td.add(() => worker.close());
  const client = await connectClient({ urls: amqpUrl(), namespace: ns.namespace, defaultTimeoutMs: 10_000 });
  td.add(() => client.close());
  for (const key of ['a', 'b', 'c']) await client.call('triage.boom', { key }).catch(() => undefined);
  await publishRaw(ns.names.requestExchange, 'triage.boom', Buffer.from('not json'), { correlationId: 'junk-1', messageId: 'm-1' });
  await waitFor(async () => (await rpc<{ total: number }>('dlq.list', { service })).result?.total === 4, { message: 'four dead letters' });
});

it('filters by reason and method', async () => {
  const exhausted = await rpc<{ total: number; items: Letter[] }>('dlq.list', { service, reason: 'retries_exhausted' });
  expect(exhausted.result?.total).toBe(3);
  expect(new Set(exhausted.result?.items.map((d) => d.method))).toEqual(new Set(['triage.boom']));
  const unservable = await rpc<{ total: number; items: Letter[] }>('dlq.list', { service, method: '' });
  expect(unservable.result?.items.map((d) => d.reason)).toEqual(['unservable']);
  expect((await rpc<{ total: number }>('dlq.list', { service, reason: 'no-such-reason' })).result?.total).toBe(0);
});

it('shows AMQP properties and headers', async () => {
  const list = await rpc<{ items: Letter[] }>('dlq.list', { service, reason: 'unservable' });
  const junk = list.result?.items[0];
  const shown = await rpc<{ amqp: { properties: Record<string, unknown>; headers: Record<string, unknown>; routingKey: string } }>('dlq.show', { service, id: junk?.id });
  expect(shown.result?.amqp.properties).toMatchObject({ correlationId: 'junk-1', messageId: 'm-1' });
  expect(shown.result?.amqp.headers).toMatchObject({ 'x-warren-dead-reason': 'unservable' });
  expect(shown.result?.amqp.routingKey).toBe(service);
});

it('replays the ids chosen, pairs each with its new call id, and names those no longer there', async () => {
  const list = await rpc<{ items: (Letter & { callId: string })[] }>('dlq.list', { service, reason: 'retries_exhausted' });
  const [first, second] = list.result?.items ?? [];
  healed = true;
  const replay = await rpc<{ replayed: number; replays: { id: string; callId: string }[]; missing?: string[] }>('dlq.replay', { service, ids: [first?.id, second?.id, 'no-such-id'] });
  expect(replay.result?.replayed).toBe(2);
  expect(replay.result?.replays.map((r) => r.id).sort()).toEqual([first?.id, second?.id].sort());
  for (const r of replay.result?.replays ?? []) expect(r.callId).toMatch(/^replay\./);
  expect(replay.result?.missing).toEqual(['no-such-id']);
  await waitFor(async () => (await rpc<{ total: number }>('dlq.list', { service })).result?.total === 2, { message: 'two left' });
  // Each replayed call ran once more (after its two failed attempts), and the third was not replayed.
  await waitFor(() => [...ran.values()].filter((n) => n === 3).length === 2, { message: 'the two replays ran' });
  expect([...ran.values()].sort()).toEqual([2, 3, 3]);
  const both = await rpc('dlq.replay', { service, id: 'x', ids: ['y'] });
  expect(both.error?.code).toBe(-32602);
});
