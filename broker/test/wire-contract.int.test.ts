// Lists what Warren declares and sends on the wire (queues with their
// arguments, exchanges with their flags, the properties and headers of
// requests, replies, notifications, cancels, announcements and dead letters)
// and checks that the protocol's docs (docs/protocol*.md) name every one of them, and that the
// messages fit the schemas in docs/schemas/. A new header, property, queue
// argument or exchange that is not documented fails here.
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { RpcClient, ServiceRegistry, startService, type WarrenService } from '@warren/amqp';
import { AmqpConnection } from '@warren/amqp-transport';
import { Teardown, amqpUrl, waitFor } from '@warren/testkit';
import Ajv from 'ajv';
import amqp, { type ConsumeMessage } from 'amqplib';
import { TestNamespace } from '../../test/support/amqp';
import { hasRabbitmqctl, rabbitmqctl } from '../../test/integration/faults/rabbitmqctl';

const root = path.join(__dirname, '..', '..');
// The contract is four files (protocol.md, protocol-jobs.md, protocol-discovery.md, protocol-availability.md): read as one.
const doc = readdirSync(path.join(root, 'docs')).filter((f) => /^protocol.*\.md$/.test(f)).map((f) => readFileSync(path.join(root, 'docs', f), 'utf8')).join('\n');
const schema = (name: string): object => JSON.parse(readFileSync(path.join(root, 'docs', 'schemas', name), 'utf8')) as object;

const td = new Teardown();
const ns = new TestNamespace();
const urls = amqpUrl();
const svc = ns.service('wire');
let service: WarrenService;
let client: RpcClient;
let spy: amqp.Channel;
const seen: Record<'request' | 'notification' | 'cancel' | 'announcement' | 'reply', ConsumeMessage[]> = { request: [], notification: [], cancel: [], announcement: [], reply: [] };

/** amqplib's camelCase property names as AMQP (and pika) spell them. */
function snake(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

/** The properties a message was sent with (the ones set), as AMQP names; headers apart. */
function propertiesOf(msg: ConsumeMessage): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(msg.properties)) if (v !== undefined && k !== 'headers') out[snake(k)] = v;
  const headers = (msg.properties.headers ?? {}) as Record<string, unknown>;
  if (Object.keys(headers).length > 0) out['headers'] = headers;
  return out;
}

/** A name with the test's namespace, service, instance and client ids put back as the document writes them. */
function generic(name: string): string {
  return name
    .replace(ns.namespace, 'NS')
    .replace(`.${service.instanceId}`, '.<instanceId>')
    .replace(`.${svc}`, '.<service>')
    .replace(/^NS\.reply\..+$/, 'NS.reply.<clientId>');
}

async function spyOn(kind: keyof typeof seen, exchange: string, key: string): Promise<void> {
  const { queue } = await spy.assertQueue('', { exclusive: true, autoDelete: true });
  await spy.bindQueue(queue, exchange, key);
  await spy.consume(queue, (msg) => msg && seen[kind].push(msg), { noAck: true });
}

beforeAll(async () => {
  td.add(() => ns.destroy());
  const connection = new AmqpConnection({ urls });
  await connection.start();
  td.add(() => connection.close());
  client = await RpcClient.create(connection, { namespace: ns.namespace });
  td.add(() => client.close());
  const registry = await ServiceRegistry.start(connection, { namespace: ns.namespace });
  td.add(() => registry.close());
  const model = await amqp.connect(urls);
  td.add(() => model.close());
  spy = await model.createChannel();
  await spyOn('request', ns.names.requestExchange, 'echo');
  await spyOn('notification', ns.names.eventExchange, 'wire.happened');
  await spyOn('cancel', ns.names.cancelExchange, '');
  await spyOn('announcement', ns.names.controlExchange, '');
  // Started after the spies, so its first announcement is seen.
  service = await startService({
    urls, namespace: ns.namespace, name: svc, announceIntervalMs: 60_000,
    methods: { echo: { handler: (p) => p } },
    notifications: { 'wire.happened': { handler: () => undefined } },
    instanceNotifications: { 'wire.private': { handler: () => undefined } },
  });
  td.add(() => service.close());
});
afterAll(() => td.run());

describe('what Warren puts on the wire is in docs/protocol*.md', () => {
  beforeAll(async () => {
    await client.call('echo', [1]);
    await client.notify('wire.happened', {});
    await client.cancelOnWire('no.such.call', 'test', Date.now() + 5000);
    // A reply, read by a spy's own reply queue, and a dead letter (an unservable body).
    const { queue } = await spy.assertQueue('', { exclusive: true });
    await spy.consume(queue, (msg) => msg && seen.reply.push(msg), { noAck: true });
    spy.publish(ns.names.requestExchange, 'echo', Buffer.from('{"jsonrpc":"2.0","method":"echo","params":[2],"id":2}'), { replyTo: queue, correlationId: 'spy.1' });
    spy.publish(ns.names.requestExchange, 'echo', Buffer.from('not json'), { replyTo: queue, correlationId: 'spy.2' });
    const counts = (): Record<string, number> => Object.fromEntries(Object.entries(seen).map(([k, v]) => [k, v.length]));
    await waitFor(() => Object.values(counts()).every((n) => n >= 1) && seen.reply.length >= 2, { message: `every kind of message seen: ${JSON.stringify(counts())}` });
  });

  it('names every property and header of requests, replies, notifications, cancels and announcements', () => {
    const missing: string[] = [];
    for (const [kind, messages] of Object.entries(seen)) {
      for (const msg of messages) {
        const props = propertiesOf(msg);
        for (const name of Object.keys(props)) if (name !== 'headers' && !doc.includes(`\`${name}\``)) missing.push(`${kind} property ${name}`);
        for (const name of Object.keys((props['headers'] ?? {}) as object)) if (!doc.includes(`\`${name}\``)) missing.push(`${kind} header ${name}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('requests fit schemas/request-properties.schema.json, cancels schemas/cancel.schema.json', () => {
    const ajv = new Ajv({ strict: true, allErrors: true });
    const request = ajv.compile(schema('request-properties.schema.json'));
    for (const msg of seen.request.filter((m) => String(m.properties.correlationId).startsWith(client.id))) expect({ ok: request(propertiesOf(msg)), errors: request.errors }).toMatchObject({ ok: true });
    const cancel = ajv.compile(schema('cancel.schema.json'));
    for (const msg of seen.cancel) expect({ ok: cancel(JSON.parse(msg.content.toString())), errors: cancel.errors }).toMatchObject({ ok: true });
    expect(seen.request[0]?.properties.headers?.['x-warren-protocol']).toBe(1);
  });

  it('dead letters of both kinds fit schemas/dead-letter.schema.json: copied by hand (x-warren-dead-*) and by RabbitMQ (x-death)', async () => {
    const ajv = new Ajv({ strict: true, allErrors: true });
    const dead = ajv.compile(schema('dead-letter.schema.json'));
    // RabbitMQ's own kind: a request that expires in a queue dead-lettering to NS.dlx, as an unconsumed request queue does.
    const { queue: expiring } = await spy.assertQueue('', { exclusive: true, arguments: { 'x-dead-letter-exchange': ns.names.deadLetterExchange, 'x-dead-letter-routing-key': svc } });
    spy.sendToQueue(expiring, Buffer.from('{"jsonrpc":"2.0","method":"echo","params":[3],"id":3}'), { correlationId: 'spy.3', expiration: '1', headers: { 'x-warren-protocol': 1, 'x-warren-deadline': Date.now() + 1 } });
    const letters: Record<string, unknown>[] = [];
    await waitFor(async () => {
      const msg = await spy.get(ns.names.deadLetterQueue(svc), { noAck: true });
      if (msg) letters.push(propertiesOf(msg as unknown as ConsumeMessage));
      return letters.length === 2;
    }, { message: 'two dead letters: the unservable body and the expired request' });
    const kinds = letters.map((props) => ('x-death' in (props['headers'] as object) ? 'rabbitmq' : 'hand'));
    expect(kinds.sort()).toEqual(['hand', 'rabbitmq']);
    for (const props of letters) {
      expect({ ok: dead(JSON.parse(JSON.stringify(props))), errors: dead.errors }).toMatchObject({ ok: true });
      for (const name of Object.keys((props['headers'] ?? {}) as object)) expect(doc).toContain(`\`${name}\``);
    }
    // RabbitMQ moved the expiration into x-death (docs/protocol-jobs.md, "Dead letters").
    const byRabbit = letters.find((p) => 'x-death' in (p['headers'] as object)) ?? {};
    expect(byRabbit['expiration']).toBeUndefined();
    expect((byRabbit['headers'] as { 'x-death': { 'original-expiration'?: string }[] })['x-death'][0]?.['original-expiration']).toBe('1');
  });

  (hasRabbitmqctl() ? it : it.skip)('names every queue, queue argument, exchange and exchange flag declared', async () => {
    const prefix = `${ns.namespace}.`;
    const rows = async (what: string, columns: string[]): Promise<string[][]> =>
      (await rabbitmqctl(['-q', what, ...columns, '--no-table-headers'], 20_000)).split('\n').map((l) => l.split('\t')).filter((r) => r[0]?.startsWith(prefix));
    const missing: string[] = [];
    for (const [name = '', type = '', durable, autoDelete, internal, args = ''] of await rows('list_exchanges', ['name', 'type', 'durable', 'auto_delete', 'internal', 'arguments'])) {
      const documented = generic(name);
      const row = doc.split('\n').find((l) => l.startsWith(`| \`${documented}\``));
      if (!row) missing.push(`exchange ${documented}`);
      else if (!row.includes(`\`${type}\``)) missing.push(`exchange ${documented} type ${type}`);
      // The document fixes one set of flags for every exchange.
      expect([durable, autoDelete, internal, args]).toEqual(['true', 'false', 'false', '[]']);
    }
    expect(doc).toContain('`durable: true`, `auto_delete: false`, `internal: false`, no\narguments');
    const queues = await rows('list_queues', ['name', 'durable', 'auto_delete', 'exclusive', 'arguments']);
    expect(queues.length).toBeGreaterThanOrEqual(5);
    for (const [name = '', , , , args = ''] of queues) {
      const documented = generic(name);
      if (!doc.includes(`\`${documented}\``)) missing.push(`queue ${documented}`);
      for (const [, key] of args.matchAll(/\{"([^"]+)"/g)) if (!doc.includes(`\`${key}\``)) missing.push(`queue ${documented} argument ${key}`);
    }
    expect(missing).toEqual([]);
  }, 60_000);
});
