// Every integer header Warren writes goes on the wire as a 64-bit signed integer (AMQP field type `l`),
// docs/protocol.md "Headers": amqplib would otherwise pick the smallest width (`b` for 1, `s` for
// -32700), which a reader expecting one width (Go's amqp091 reads no `u`/`i`) misses. Read here as
// amqplib encodes the table: the type byte of each field.
import path from 'node:path';
import type { WireChannel, WireMessage, WirePublishOptions } from '@warren/amqp-transport';
import { PublishHeaders } from '../src/engine/publish-headers';
import { progressHeaders } from '../src/wire/progress';
import { forwardDeadLetter } from '../src/wire/dead-letter';
import { publishRetry } from '../src/runtime/retry';
import { MemoryBroker } from '@warren/amqp-transport';

// amqplib's codec (not in its exports map, and without types): the file beside its main module.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const codec = require(path.join(path.dirname(require.resolve('amqplib')), 'lib', 'codec.js')) as { encodeTable(buffer: Buffer, table: unknown, offset: number): number };

/** Each field's AMQP type letter, by name, as amqplib writes `table`. */
function fieldTypes(table: Record<string, unknown>): Record<string, string> {
  const buf = Buffer.alloc(4096);
  const end = codec.encodeTable(buf, table, 0);
  const types: Record<string, string> = {};
  let at = 4; // the table's 32-bit length
  while (at < end) {
    const nameLength = buf.readUInt8(at);
    const name = buf.toString('utf8', at + 1, at + 1 + nameLength);
    at += 1 + nameLength;
    const type = String.fromCharCode(buf.readUInt8(at));
    types[name] = type;
    at += 1;
    // Only the types these tables hold: S (long string), l (int64), b/s/I (narrower integers).
    if (type === 'S') at += 4 + buf.readUInt32BE(at);
    else if (type === 'l') at += 8;
    else if (type === 'I') at += 4;
    else if (type === 's') at += 2;
    else if (type === 'b') at += 1;
    else throw new Error(`unexpected field type ${type}`);
  }
  return types;
}

function capture(): { channel: WireChannel; published: WirePublishOptions[] } {
  const published: WirePublishOptions[] = [];
  const channel = { publish: (_e: string, _k: string, _c: Buffer, o: WirePublishOptions) => void published.push(o), ack: () => undefined } as unknown as WireChannel;
  return { channel, published };
}

const request: WireMessage = {
  content: Buffer.from('{}'),
  fields: { deliveryTag: 1, redelivered: false, exchange: 'ns.rpc', routingKey: 'add' },
  // As amqplib decodes an older peer's table: plain numbers, which Warren must write back as `l`.
  properties: { headers: { 'x-warren-protocol': 1, 'x-warren-deadline': 1_764_460_000_000, 'x-other': 7 }, correlationId: 'c.1', replyTo: 'r' },
} as unknown as WireMessage;

describe('integer headers are written as l (64-bit)', () => {
  it('requests and notifications: x-warren-protocol, -minor, -deadline, -sent, -progress', () => {
    const h = new PublishHeaders();
    expect(fieldTypes(h.forRequest(Date.now() + 1000, '', true, undefined))).toEqual({
      'x-warren-protocol': 'l', 'x-warren-protocol-minor': 'l', 'x-warren-deadline': 'l', traceparent: 'S', 'x-warren-progress': 'l', 'x-warren-sent': 'l',
    });
    expect(fieldTypes(h.forEvent('', undefined))).toEqual({ 'x-warren-protocol': 'l', 'x-warren-protocol-minor': 'l', traceparent: 'S' });
  });

  it('progress messages: x-warren-progress', () => {
    expect(fieldTypes(progressHeaders)).toEqual({ 'x-warren-progress': 'l' });
  });

  it('dead letters (x-warren-dead-code -32700 included) and retries, with the integers they carry', () => {
    const dead = capture();
    forwardDeadLetter(dead.channel, 'ns.dlx', 'svc', request, { reason: 'unparseable', code: -32700, attempts: 1 });
    const deadTypes = fieldTypes(dead.published[0]?.headers ?? {});
    expect(deadTypes).toMatchObject({ 'x-warren-dead-code': 'l', 'x-warren-dead-attempts': 'l', 'x-warren-dead-at': 'l', 'x-warren-protocol': 'l', 'x-other': 'l' });
    const retry = capture();
    publishRetry(retry.channel, 'ns.retry', request, 2, Date.now() + 1000);
    expect(fieldTypes(retry.published[0]?.headers ?? {})).toMatchObject({ 'x-warren-attempt': 'l', 'x-warren-protocol': 'l' });
  });

  it('the in-memory broker hands typed numbers to consumers as plain numbers, as amqplib decodes them', async () => {
    const broker = new MemoryBroker();
    const connection = broker.connect();
    try {
      const model = connection.model;
      if (!model) throw new Error('no model');
      const ch = await model.createChannel();
      const { queue } = await ch.assertQueue('', { exclusive: true });
      const got = new Promise<Record<string, unknown> | undefined>((resolve) => void ch.consume(queue, (m) => resolve(m?.properties.headers as Record<string, unknown> | undefined), { noAck: true }));
      ch.publish('', queue, Buffer.from('x'), { headers: progressHeaders });
      await expect(got).resolves.toEqual({ 'x-warren-progress': 1 });
    } finally {
      await connection.close();
      await broker.close();
    }
  });
});
