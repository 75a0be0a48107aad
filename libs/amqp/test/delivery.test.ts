// What the runtime reads off a delivery decides whether a tracked handler may start before its claim is
// answered (firstDelivery): only a message RabbitMQ has never delivered before, no retry, and a call (with a
// reply_to): a job (none) may have a copy under its id, so its claim is awaited.
import type { WireMessage } from '@warren/amqp-transport';
import { Header } from '../src/wire/headers';
import { readDelivery } from '../src/wire/delivery';

const message = (redelivered: boolean, headers: Record<string, unknown> = {}, replyTo = 'warren.reply.c'): WireMessage =>
  ({ content: Buffer.alloc(0), fields: { deliveryTag: 1, redelivered, exchange: '', routingKey: 'q' }, properties: { correlationId: 'c1', headers, replyTo } }) as unknown as WireMessage;

it.each([
  { name: 'a first delivery', msg: message(false), first: true, attempt: 1 },
  { name: 'a first delivery of a job (no reply_to)', msg: message(false, {}, ''), first: false, attempt: 1 },
  { name: 'a redelivery on a classic queue', msg: message(true), first: false, attempt: 2 },
  { name: "a quorum queue's redelivery (delivery count 1)", msg: message(true, { [Header.deliveryCount]: 1 }), first: false, attempt: 2 },
  { name: 'a redelivery whose publisher forged a delivery count of 0', msg: message(true, { [Header.deliveryCount]: 0 }), first: false, attempt: 1 },
  { name: 'a retried request (attempt header 2), first delivered', msg: message(false, { [Header.attempt]: 2 }), first: false, attempt: 2 },
  { name: 'a delivery count on a message not marked redelivered', msg: message(false, { [Header.deliveryCount]: 3 }), first: false, attempt: 4 },
])('$name: firstDelivery $first, attempt $attempt', ({ msg, first, attempt }) => {
  const info = readDelivery(msg, 30_000, 1_000);
  expect(info.firstDelivery).toBe(first);
  expect(info.attempt).toBe(attempt);
});

// x-warren-deadline's AMQP types (docs/protocol.md, "Deadlines"), in the form amqplib decodes each.
describe('the deadline header', () => {
  const deadlineOf = (value: unknown): number | undefined => {
    const info = readDelivery(message(false, { [Header.deadline]: value }), 30_000, 1_000);
    return info.hasDeadlineHeader ? info.deadline : undefined;
  };
  it.each([
    ['an integer (b B s u I i l: a number)', 1_764_000_000_000, 1_764_000_000_000],
    ['a float (f d)', 1_764_000_000_000.5, 1_764_000_000_000.5],
    ['a bigint', 1_764_000_000_000n, 1_764_000_000_000],
    ['a decimal (D)', { '!': 'decimal', value: { places: 2, digits: 123_456 } }, 1234.56],
    ['a string of digits', '1764000000000', 1_764_000_000_000],
  ])('reads %s', (_name, value, expected) => {
    expect(deadlineOf(value)).toBe(expected);
  });
  it.each([
    ['a timestamp (T: seconds in AMQP)', { '!': 'timestamp', value: 1_764_000_000 }],
    ['"1e3"', '1e3'],
    ['"0x10"', '0x10'],
    ['"-5"', '-5'],
    ['" 7" (whitespace)', ' 7'],
    ['"1.5"', '1.5'],
    ['a boolean', true],
    ['a table', { a: 1 }],
    ['NaN', Number.NaN],
  ])('ignores %s: the default deadline applies', (_name, value) => {
    expect(deadlineOf(value)).toBeUndefined();
    expect(readDelivery(message(false, { [Header.deadline]: value }), 30_000, 1_000).deadline).toBe(31_000);
  });
});
