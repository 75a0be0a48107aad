// What the runtime reads off a delivery decides whether a tracked handler may start before its claim is
// answered (firstDelivery): only a message RabbitMQ has never delivered before, and no retry.
import type { WireMessage } from '../src/transport/contract';
import { Header } from '../src/wire/headers';
import { readDelivery } from '../src/wire/delivery';

const message = (redelivered: boolean, headers: Record<string, unknown> = {}): WireMessage =>
  ({ content: Buffer.alloc(0), fields: { deliveryTag: 1, redelivered, exchange: '', routingKey: 'q' }, properties: { correlationId: 'c1', headers } }) as unknown as WireMessage;

it.each([
  { name: 'a first delivery', msg: message(false), first: true, attempt: 1 },
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
