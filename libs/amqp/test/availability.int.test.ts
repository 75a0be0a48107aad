import { RpcClient, ServiceRegistry, guardAvailability, startService, type QueueDepths, type WarrenService } from '@warren/amqp';
import { AmqpConnection } from '@warren/amqp-transport';
import { ErrorCode, RawNumberId, decode, wireErrorOf, type ResponseMessage } from '@warren/jsonrpc';
import { Teardown, amqpUrl, waitFor } from '@warren/testkit';
import amqp from 'amqplib';
import { TestNamespace } from '../../../test/support/amqp';

const td = new Teardown();
const ns = new TestNamespace();
const urls = amqpUrl();
let client: RpcClient;
let registry: ServiceRegistry;
let depths: QueueDepths;

async function calculator(): Promise<WarrenService> {
  const s = await startService({ urls, namespace: ns.namespace, name: ns.service('calc'), methods: { add: { handler: (p) => (p as number[]).reduce((x, y) => x + y, 0) } }, announceIntervalMs: 60_000 });
  td.add(() => s.close());
  return s;
}

/** The wire code and data a call fails with (a local failure by its wire form, as a gateway would answer it). */
async function codeOf(p: Promise<unknown>): Promise<{ code: number | undefined; data: unknown }> {
  try {
    await p;
    return { code: undefined, data: undefined };
  } catch (err) {
    const wire = wireErrorOf(err);
    return wire ? { code: wire.code, data: wire.data } : { code: undefined, data: err };
  }
}

beforeAll(async () => {
  td.add(() => ns.destroy());
  const connection = new AmqpConnection({ urls });
  await connection.start();
  td.add(() => connection.close());
  client = await RpcClient.create(connection, { namespace: ns.namespace, defaultTimeoutMs: 10_000 });
  td.add(() => client.close());
  registry = await ServiceRegistry.start(connection, { namespace: ns.namespace });
  td.add(() => registry.close());
  ({ depths } = guardAvailability(client, connection, registry, { ttlMs: 200 }));
});
afterAll(() => td.run());

describe('no silent waits', () => {
  it('answers -32002 naming the service, well before the deadline, when the service has no consumer', async () => {
    const service = await calculator();
    await waitFor(() => registry.list().some((i) => i.service === ns.names.serviceQueue('calc').split('.svc.')[1]), { message: 'announcement heard' });
    expect(await client.call('add', [4, 5])).toBe(9);
    await service.close();
    const started = Date.now();
    const { code, data } = await codeOf(client.call('add', [4, 5]));
    const tookMs = Date.now() - started;
    expect(code).toBe(ErrorCode.ServiceUnavailable);
    expect(data).toMatchObject({ reason: 'no_consumers', service: 'calc', method: 'add' });
    // A generous upper bound, not a timing assertion: the deadline is 10 s.
    expect(tookMs).toBeLessThan(1500);
    expect(await depths.read('calc')).toEqual({ messages: 0, consumers: 0 });
  });

  it('lets a job-style (persistent) call queue while workers are down, and runs it when one comes back', async () => {
    const queued = client.call('add', [1, 2], { persistent: true });
    await waitFor(async () => (await depths.read('calc'))?.messages === 1, { message: 'request queued' });
    await calculator();
    await expect(queued).resolves.toBe(3);
  });

  it('calls through again once the service is back', async () => {
    await waitFor(async () => (await codeOf(client.call('add', [2, 2]))).code === undefined, { message: 'served again' });
  });

  it('leaves a method nobody ever announced alone (mandatory still answers -32601 when no queue is bound)', async () => {
    expect((await codeOf(client.call('nobody.serves.this', []))).code).toBe(ErrorCode.MethodNotFound);
  });
});

describe('no silent waits after a crash (no withdraw)', () => {
  it('answers -32002 once the trusted count is stale, while the registry still lists the dead instance', async () => {
    // A worker in another process: a raw consumer on its own connection, announced by hand, then its connection dies.
    const service = 'crashy';
    ns.service(service);
    const model = await amqp.connect(urls);
    const ch = await model.createChannel();
    const queue = ns.names.serviceQueue(service);
    await ch.assertQueue(queue, { durable: true, arguments: { 'x-queue-type': 'classic', 'x-dead-letter-exchange': ns.names.deadLetterExchange, 'x-dead-letter-routing-key': service } });
    await ch.bindQueue(queue, ns.names.requestExchange, 'crashy.work');
    await ch.consume(queue, (msg) => {
      if (!msg) return;
      ch.publish('', String(msg.properties.replyTo), Buffer.from('{"jsonrpc":"2.0","result":"done","id":1}'), { correlationId: msg.properties.correlationId as string });
      ch.ack(msg);
    });
    ch.publish(ns.names.controlExchange, '', Buffer.from(JSON.stringify({ v: 1, type: 'announce', service, instanceId: 'i1', startedAt: Date.now(), intervalMs: 60_000, methods: [{ name: 'crashy.work' }], notifications: [], instanceNotifications: [], metadata: {}, running: 0 })));
    await waitFor(() => registry.list().some((i) => i.service === service), { message: 'announcement heard' });
    expect(await client.call('crashy.work', [], { id: 1 })).toBe('done');
    await model.close(); // the "crash": RabbitMQ drops its consumer, nobody withdraws
    expect(registry.list().some((i) => i.service === service)).toBe(true);
    // A call published while the last count (read under 200 ms ago) is trusted may still go out and time out;
    // once the count is stale, it is read again and the answer is -32002 at once.
    let last: { code: number | undefined; data: unknown } = { code: undefined, data: undefined };
    await waitFor(async () => (last = await codeOf(client.call('crashy.work', [], { id: 1, timeoutMs: 300 }))).code === ErrorCode.ServiceUnavailable, { message: 'answered -32002' });
    const { data } = last;
    expect(data).toMatchObject({ service });
  });
});

describe('exact ids over AMQP', () => {
  it.each(['9007199254740993', '1.0', '0.1000000000000000000001'])('echoes id %s byte for byte, through the client and on the wire', async (text) => {
    const response: ResponseMessage = await client.request({ jsonrpc: '2.0', method: 'add', params: [1, 1], id: new RawNumberId(text) });
    expect(response.id).toEqual(new RawNumberId(text));
    // And as bytes on the reply queue, for a non-Warren client reading the reply itself.
    const model = await amqp.connect(urls);
    try {
      const ch = await model.createChannel();
      const { queue } = await ch.assertQueue('', { exclusive: true });
      const body = await new Promise<string>((resolve) => {
        void ch.consume(queue, (msg) => msg && resolve(msg.content.toString()), { noAck: true });
        ch.publish(ns.names.requestExchange, 'add', Buffer.from(`{"jsonrpc":"2.0","method":"add","params":[1,1],"id":${text}}`), { replyTo: queue, correlationId: 'raw-1', contentType: 'application/json' });
      });
      expect(body).toContain(`"id":${text}`);
      expect(decode(body)).toMatchObject({ kind: 'single', item: { kind: 'response', message: { result: 2 } } });
    } finally {
      await model.close();
    }
  });
});
