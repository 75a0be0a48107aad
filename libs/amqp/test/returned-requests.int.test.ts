// A served method RabbitMQ returns unrouted (312 NO_ROUTE) is -32002 for every client Warren makes, with
// nothing installed: connectClient's and a service's `ctx` client ask the announcements once a request comes
// back (discovery/returned-requests.ts). On one node the situation is made by taking the binding away from an
// announcing service's queue, which RabbitMQ treats exactly as a classic queue whose home node is down
// (test/cluster/classic-home-node.test.ts shows that case on a real three-node cluster).
import { connectClient, guardAvailability, ServiceRegistry, startService, type RpcClient } from '@warren/amqp';
import { AmqpConnection } from '@warren/amqp-transport';
import { ErrorCode, wireErrorOf } from '@warren/jsonrpc';
import { Teardown, amqpUrl } from '@warren/testkit';
import amqp from 'amqplib';
import { TestNamespace } from '../../../test/support/amqp';

const td = new Teardown();
const ns = new TestNamespace();
const urls = amqpUrl();
const served = 'ret.work';
let plain: RpcClient;

/** The wire error a call fails with: code and data ('ok' when it answers). */
const failure = (call: Promise<unknown>): Promise<{ code: number; data: unknown } | 'ok'> =>
  call.then(() => 'ok' as const, (err: unknown) => {
    const wire = wireErrorOf(err);
    if (!wire) throw err;
    return { code: wire.code, data: wire.data };
  });

beforeAll(async () => {
  td.add(() => ns.destroy());
  const work = ns.service('ret');
  const s = await startService({ urls, namespace: ns.namespace, name: work, methods: { [served]: { handler: () => 'done' } }, announceIntervalMs: 60_000 });
  td.add(() => s.close());
  const front = await startService({
    urls, namespace: ns.namespace, name: ns.service('retfront'),
    methods: { 'retfront.via': { handler: (p, ctx) => ctx.client.call(String((p as string[])[0]), [], { timeoutMs: 5000 }) } },
  });
  td.add(() => front.close());
  plain = await connectClient({ urls, namespace: ns.namespace, defaultTimeoutMs: 5000 });
  td.add(() => plain.close());
  await expect(plain.call(served)).resolves.toBe('done');
  // The queue stays (and the instance announces `ret.work`), but nothing routes to it any more.
  const model = await amqp.connect(urls);
  td.add(() => model.close());
  const ch = await model.createChannel();
  await ch.unbindQueue(ns.names.serviceQueue(work), ns.names.requestExchange, served);
}, 30_000);
afterAll(() => td.run());

it('a default connectClient answers -32002 queue_unavailable naming the service for a served method RabbitMQ returns, and -32601 for an unserved one', async () => {
  expect(await failure(plain.call(served))).toEqual({ code: ErrorCode.ServiceUnavailable, data: { reason: 'queue_unavailable', service: ns.service('ret'), method: served, queued: 0 } });
  expect(await failure(plain.call('ret.nobody.serves'))).toEqual({ code: ErrorCode.MethodNotFound, data: { reason: 'no_route', method: 'ret.nobody.serves', namespace: ns.namespace, suggestions: [] } });
  // Later returns answer from the announcements already heard.
  expect(await failure(plain.call(served))).toMatchObject({ code: ErrorCode.ServiceUnavailable });
  expect(plain.stats()).toMatchObject({ pending: 0, returned: 3 });
});

it('so does a service calling it through ctx (the caller gets the -32002 the nested call failed with)', async () => {
  expect(await failure(plain.call('retfront.via', [served]))).toMatchObject({ code: ErrorCode.ServiceUnavailable, data: { reason: 'queue_unavailable', service: ns.service('ret') } });
  expect(await failure(plain.call('retfront.via', ['ret.nobody.serves']))).toMatchObject({ code: ErrorCode.MethodNotFound });
});

it('guardAvailability answers first, and falls back to the announcements for what its registry has not heard', async () => {
  const connection = new AmqpConnection({ urls });
  await connection.start();
  td.add(() => connection.close());
  const client = await connectClient({ connection, namespace: ns.namespace, defaultTimeoutMs: 5000 });
  td.add(() => client.close());
  // A registry that hears nothing (announce-now off, and the instances announce once a minute): the gate knows no service.
  const deaf = await ServiceRegistry.start(connection, { namespace: ns.namespace, announceNow: false });
  td.add(() => deaf.close());
  const guard = guardAvailability(client, connection, deaf);
  expect(await failure(client.call(served))).toMatchObject({ code: ErrorCode.ServiceUnavailable, data: { reason: 'queue_unavailable' } });
  guard.close();
  expect(await failure(client.call('ret.nobody.serves'))).toMatchObject({ code: ErrorCode.MethodNotFound });
});
