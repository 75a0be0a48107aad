// Protocol v1.1 (docs/protocol.md), as a peer in another language meets it: raw AMQP publishes to a
// Warren service, read back byte for byte. The deadline header's AMQP types; a body whose deadline
// passed answered -32001 whatever it is; number ids past a double and string ids with escapes; the
// minor version on the wire.
import amqp, { type Channel, type ConsumeMessage } from 'amqplib';
import { connectClient, startService } from '@warren/amqp';
import { Teardown, amqpUrl, waitFor } from '@warren/testkit';
import { TestNamespace, queueDepth } from '../../../test/support/amqp';

const td = new Teardown();
const ns = new TestNamespace();
const urls = amqpUrl();
const svc = ns.service('v11');
let ch: Channel;
let replyQueue: string;
const replies = new Map<string, ConsumeMessage>();
let seq = 0;

beforeAll(async () => {
  td.add(() => ns.destroy());
  const service = await startService({
    urls, namespace: ns.namespace, name: svc,
    methods: { 'v11.deadline': { handler: (_p, ctx) => ctx.deadline }, 'v11.echo': { handler: (p) => p } },
  });
  td.add(() => service.close());
  const model = await amqp.connect(Array.isArray(urls) ? String(urls[0]) : String(urls));
  td.add(() => model.close());
  ch = await model.createChannel();
  replyQueue = (await ch.assertQueue('', { exclusive: true })).queue;
  await ch.consume(replyQueue, (m) => m && replies.set(String(m.properties.correlationId), m), { noAck: true });
});
afterAll(() => td.run());

/** Publishes a raw body with raw headers as another language would, and resolves with the reply's text. */
async function raw(body: string, headers: Record<string, unknown>, method = 'v11.echo'): Promise<string> {
  const id = `raw.${++seq}`;
  ch.publish(ns.names.requestExchange, method, Buffer.from(body), { correlationId: id, replyTo: replyQueue, contentType: 'application/json', headers });
  await waitFor(() => replies.has(id), { message: `a reply to ${body}` });
  return (replies.get(id) as ConsumeMessage).content.toString();
}

const request = (method: string, id = 1): string => `{"jsonrpc":"2.0","method":"${method}","params":[],"id":${id}}`;
const future = (): number => Date.now() + 60_000;

describe('x-warren-deadline: the AMQP types read, and those ignored', () => {
  it('reads an integer (l, as pika writes an int of ms), a float (d) and a string of digits', async () => {
    const deadline = future();
    for (const value of [deadline, { '!': 'long', value: deadline }, { '!': 'double', value: deadline + 0.5 }, String(deadline)]) {
      expect(JSON.parse(await raw(request('v11.deadline'), { 'x-warren-deadline': value }, 'v11.deadline')).result).toBe(typeof value === 'object' && value['!'] === 'double' ? deadline + 0.5 : deadline);
    }
  });

  it('reads a deadline past the largest (8.64e15 ms, year 275760; int64 goes to 9.2e18) as the largest, and runs the call', async () => {
    // The largest double below 2^63 (amqplib cannot write 2^63 - 1 from a JS number).
    for (const value of [{ '!': 'long', value: 9_223_372_036_854_774_784 }, '9999999999999999']) {
      expect(JSON.parse(await raw(request('v11.deadline'), { 'x-warren-deadline': value }, 'v11.deadline')).result).toBe(8_640_000_000_000_000);
    }
  });

  it('reads a decimal (D): it cannot hold a deadline in ms of today, so it reads as passed and is answered -32001', async () => {
    const reply = JSON.parse(await raw(request('v11.deadline'), { 'x-warren-deadline': { '!': 'decimal', value: { places: 0, digits: 4_000_000_000 } } }, 'v11.deadline'));
    expect(reply.error).toMatchObject({ code: -32001, data: { reason: 'deadline_passed' } });
  });

  it.each([
    ['a timestamp (T)', { '!': 'timestamp', value: Math.floor(Date.now() / 1000) }],
    ['the string "1e3"', '1e3'],
    ['the string "0x10"', '0x10'],
    ['the string "-5"', '-5'],
    ['a boolean', true],
  ])('ignores %s: the default deadline (now + 30 s) applies', async (_name, value) => {
    const before = Date.now();
    const { result } = JSON.parse(await raw(request('v11.deadline'), { 'x-warren-deadline': value }, 'v11.deadline')) as { result: number };
    expect(result).toBeGreaterThanOrEqual(before + 30_000);
    expect(result).toBeLessThanOrEqual(Date.now() + 30_000);
  });
});

describe('a body whose deadline had passed is answered -32001 deadline_passed, whatever it is', () => {
  const passed = { 'x-warren-deadline': Date.now() - 1000 };
  const deadlinePassed = { code: -32001, message: 'Deadline exceeded', data: { reason: 'deadline_passed' } };

  it('a request, with its id', async () => {
    expect(JSON.parse(await raw(request('v11.echo', 7), passed))).toEqual({ jsonrpc: '2.0', id: 7, error: deadlinePassed });
  });

  it('a batch: a batch response, -32001 per request, the -32600 of an invalid entry, nothing for a notification', async () => {
    const body = `[${request('v11.echo', 1)},{"jsonrpc":"2.0","method":"v11.echo"},${request('v11.echo', 2)},{"jsonrpc":"1.0","method":"v11.echo","id":3}]`;
    expect(JSON.parse(await raw(body, passed))).toEqual([
      { jsonrpc: '2.0', id: 1, error: deadlinePassed },
      { jsonrpc: '2.0', id: 2, error: deadlinePassed },
      { jsonrpc: '2.0', id: 3, error: { code: -32600, message: 'Invalid Request' } },
    ]);
  });

  it('a body that cannot be read, with id null (and it is not dead-lettered)', async () => {
    expect(JSON.parse(await raw('not json at all', passed))).toEqual({ jsonrpc: '2.0', id: null, error: deadlinePassed });
    expect(JSON.parse(await raw('[]', passed))).toEqual({ jsonrpc: '2.0', id: null, error: deadlinePassed });
    expect(await queueDepth(ns.names.deadLetterQueue(svc))).toBe(0);
  });
});

describe('ids', () => {
  it.each(['1E400', '1e309', '-1e309'])('a number id past a double (%s) comes back as written', async (text) => {
    expect(await raw(request('v11.echo', text as unknown as number), { 'x-warren-deadline': future() })).toBe(`{"jsonrpc":"2.0","result":[],"id":${text}}`);
  });

  it('a string id with escapes comes back as the same string, in JSON\'s shortest escapes', async () => {
    const reply = await raw('{"jsonrpc":"2.0","method":"v11.echo","params":[],"id":"a\\u0041\\/\\u00e9\\n\\"\\\\"}', { 'x-warren-deadline': future() });
    expect(reply).toBe('{"jsonrpc":"2.0","result":[],"id":"aA/é\\n\\"\\\\"}');
    expect(JSON.parse(reply).id).toBe('aA/é\n"\\');
  });
});

it('a reply carries no trace context (it belongs to the span of the request it answers)', async () => {
  const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
  await raw(request('v11.echo', 9), { 'x-warren-deadline': future(), traceparent });
  const reply = replies.get(`raw.${seq}`);
  expect(reply?.properties.correlationId).toBe(`raw.${seq}`);
  expect(reply?.properties.headers?.['traceparent']).toBeUndefined();
});

it('the reference client signals 1.2: x-warren-protocol 1 (as v1 peers compare) and x-warren-protocol-minor 2', async () => {
  const spy = (await ch.assertQueue('', { exclusive: true })).queue;
  await ch.bindQueue(spy, ns.names.requestExchange, 'v11.echo');
  const seen: ConsumeMessage[] = [];
  await ch.consume(spy, (m) => m && seen.push(m), { noAck: true });
  const client = await connectClient({ urls, namespace: ns.namespace });
  td.add(() => client.close());
  await client.call('v11.echo', [1]);
  await waitFor(() => seen.length === 1, { message: 'the request seen' });
  expect(seen[0]?.properties.headers).toMatchObject({ 'x-warren-protocol': 1, 'x-warren-protocol-minor': 2 });
});
