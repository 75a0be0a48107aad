// fast-check fuzz of readDelivery, the service consumer's reading of a raw delivery: any header
// table and properties, including values RabbitMQ would refuse to carry (NaN, infinities), which
// the consumer fuzz (consumer-fuzz.int.test.ts) cannot publish. Pure: no RabbitMQ.
import type { ConsumeMessage } from 'amqplib';
import fc from 'fast-check';
import { readDelivery } from '../src/wire/delivery';

/** Runs of the property; the report quotes it. */
export const deliveryRuns = 1000;

describe('reading a delivery', () => {
  it(`reads any header table and properties without throwing, into a finite deadline, an attempt >= 1 and a call id (${deliveryRuns} runs)`, () => {
    const anything = fc.oneof(fc.anything(), fc.double(), fc.constantFrom(Number.NaN, Infinity, -Infinity, -0, 2 ** 53 + 1, Number('1e309'), '1e400', ' 12 ', '', Buffer.from('9')), fc.bigInt(), fc.record({ value: fc.anything() }));
    fc.assert(
      fc.property(
        fc.dictionary(fc.constantFrom('x-warren-deadline', 'x-delivery-count', 'traceparent', 'other'), anything),
        fc.record({ correlationId: anything, messageId: anything, replyTo: anything }, { requiredKeys: [] }),
        fc.boolean(),
        (headers, props, redelivered) => {
          const msg = { content: Buffer.alloc(0), fields: { deliveryTag: 1, redelivered }, properties: { headers, ...props } } as unknown as ConsumeMessage;
          const info = readDelivery(msg, 30_000, 1_000_000);
          expect(Number.isFinite(info.deadline)).toBe(true);
          expect(Number.isInteger(info.attempt) && info.attempt >= 1).toBe(true);
          expect(typeof info.callId === 'string' && info.callId.length > 0).toBe(true);
          expect(info.replyTo === undefined || (typeof info.replyTo === 'string' && info.replyTo.length > 0)).toBe(true);
          expect(info.traceparent === undefined || typeof info.traceparent === 'string').toBe(true);
          // Only a first delivery may start its handler before its claim is answered: never a redelivery.
          if (info.firstDelivery) expect([redelivered, info.attempt]).toEqual([false, 1]);
        },
      ),
      { numRuns: deliveryRuns },
    );
  });
});
