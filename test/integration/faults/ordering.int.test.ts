// The only ordering Warren has is RabbitMQ's: messages published on one
// channel to one queue are delivered in publish order. So one client's calls
// (and notifications) reach a single instance with prefetch 1 in the order
// they were made. Across a pool, with prefetch > 1, or after a redelivery
// there is no order (docs/reliability.md, Ordering).
import { connectClient, startService, type RpcClient } from '@warren/amqp';
import { Teardown, amqpUrl, waitFor } from '@warren/testkit';
import { TestNamespace } from '../../support/amqp';

const td = new Teardown();
const ns = new TestNamespace();
let client: RpcClient;

beforeAll(async () => {
  td.add(() => ns.destroy());
  client = await connectClient({ urls: amqpUrl(), namespace: ns.namespace });
  td.add(() => client.close());
});
afterAll(() => td.run());

it('one client, one instance with prefetch 1: calls run, and notifications arrive, in the order they were made', async () => {
  const calls: number[] = [];
  const notes: number[] = [];
  const s = await startService({
    urls: amqpUrl(),
    namespace: ns.namespace,
    name: ns.service('fifo'),
    prefetch: 1,
    methods: { 'fifo.run': { handler: (p) => void calls.push((p as number[])[0] ?? -1) } },
    notifications: { 'fifo.note': { handler: (p) => void notes.push((p as number[])[0] ?? -1) } },
  });
  td.add(() => s.close());
  const n = Array.from({ length: 200 }, (_v, i) => i);
  // Made back to back without waiting: all on the client's one channel.
  await Promise.all([...n.map((i) => client.call('fifo.run', [i])), ...n.map((i) => client.notify('fifo.note', [i]))]);
  await waitFor(() => notes.length === 200);
  expect(calls).toEqual(n);
  expect(notes).toEqual(n);
});
