// The raw AMQP messages the consumer fuzz (consumer-fuzz.int.test.ts) publishes, as fast-check
// arbitraries: random bodies, odd x-warren-deadline / traceparent / other headers, content types,
// reply and id modes, and the AMQP properties a non-Warren client may set.
import fc from 'fast-check';
import { payloads, trickyMethodNames } from '../../../test/support/hostile';

/** An x-warren-deadline value and how docs/protocol.md says it must be read: a time to come, one past, or no deadline (now + 30 s). */
type DeadlineKind = 'future' | 'past' | 'none';
const deadlineHeader: fc.Arbitrary<{ make: () => unknown; kind: DeadlineKind }> = fc.oneof(
  { weight: 4, arbitrary: fc.constant({ make: () => undefined, kind: 'none' as const }) },
  { weight: 3, arbitrary: fc.constantFrom<{ make: () => unknown; kind: DeadlineKind }>(
    { make: () => Date.now() + 60_000, kind: 'future' },
    { make: () => String(Date.now() + 60_000), kind: 'future' },
    { make: () => 1e18, kind: 'future' },
    { make: () => 2 ** 53 + 1, kind: 'future' },
    { make: () => (Date.now() + 60_000) + 0.5, kind: 'future' },
  ) },
  { weight: 2, arbitrary: fc.constantFrom<{ make: () => unknown; kind: DeadlineKind }>(
    { make: () => Date.now() - 1000, kind: 'past' },
    { make: () => -1, kind: 'past' },
    { make: () => 0, kind: 'past' },
    { make: () => -1e18, kind: 'past' },
    { make: () => '1000', kind: 'past' },
    { make: () => 1.5, kind: 'past' },
  ) },
  { weight: 3, arbitrary: fc.constantFrom<{ make: () => unknown; kind: DeadlineKind }>(
    { make: () => 'soon', kind: 'none' },
    { make: () => '', kind: 'none' },
    { make: () => ' ', kind: 'none' },
    // A NaN or infinite double never reaches a service: RabbitMQ 3.10 cannot parse one in a header table
    // and closes the publisher's connection (541). The same values as text do arrive; readDelivery is fuzzed
    // with the numbers themselves in delivery-fuzz.test.ts.
    { make: () => 'NaN', kind: 'none' },
    { make: () => 'Infinity', kind: 'none' },
    { make: () => '-Infinity', kind: 'none' },
    { make: () => ({ a: 1 }), kind: 'none' },
    { make: () => [1, 2], kind: 'none' },
    { make: () => true, kind: 'none' },
    { make: () => null, kind: 'none' },
    { make: () => Buffer.from('123'), kind: 'none' },

    { make: () => '1e400', kind: 'none' },
    // Protocol v1.1: a string deadline is digits only, so neither hex nor padded text is one.
    { make: () => '0x10', kind: 'none' },
    { make: () => ` ${Date.now() - 1000} `, kind: 'none' },
    { make: () => '-5', kind: 'none' },
  ) },
);
const shortText = fc.string({ unit: 'grapheme-ascii', maxLength: 40 });
const traceparentHeader = fc.oneof(
  fc.constant(undefined),
  fc.constantFrom('00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', '00-00000000000000000000000000000000-0000000000000000-00', 'ff-x', '00-ZZ-YY-01', 5, { a: 1 }, Buffer.from('00-')),
  shortText,
);
// Only what amqplib can encode: an integral double beyond int64 makes publish() throw (and leaves a confirm channel's count off by one).
// (amqplib writes any number of magnitude 2^50 or more as an int64).
const encodableDouble = fc.double({ noNaN: true, noDefaultInfinity: true }).filter((d) => Math.abs(d) < 2 ** 50);
const headerValue: fc.Arbitrary<unknown> = fc.oneof(shortText, fc.integer(), fc.boolean(), fc.constant(null), encodableDouble, fc.dictionary(fc.string({ maxLength: 5 }).filter((k) => k !== '!'), shortText, { maxKeys: 3 }), fc.array(fc.integer(), { maxLength: 3 }));
// RabbitMQ refuses, at publish, a CC or BCC header (sender-selected routing) that is not a list of strings, and closes
// the publisher's channel: such a message never reaches a consumer, so the generator leaves those two names out.
const headerName = fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 20 }).filter((k) => k !== 'CC' && k !== 'BCC');
const extraHeaders = fc.dictionary(fc.oneof(headerName, fc.constantFrom('x-delivery-count', 'x-warren-origin', 'x-death', '__proto__')), headerValue, { maxKeys: 4 });
const contentType = fc.oneof(fc.constantFrom('application/json', 'text/plain', 'application/octet-stream', 'application/x-www-form-urlencoded', undefined), shortText);

/** Who the answer goes to: our reply queue, nobody, or a queue that does not exist (the default exchange drops it). */
type ReplyMode = 'ours' | 'none' | 'empty' | 'nowhere';
/** How the answer is keyed: correlation_id, else message_id, else nothing (the service makes up `anon.…`). */
type IdMode = 'correlation' | 'message' | 'neither';

/** One raw message to publish, with the namespace's tricky method names among the methods. */
export function rawMessages(namespace: string) {
  const methodName = fc.oneof(
    { weight: 5, arbitrary: fc.constantFrom('echo', 'add', 'note') },
    { weight: 2, arbitrary: fc.constantFrom(...trickyMethodNames(namespace)) },
    { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 20 }) },
  );
  const body = payloads(methodName);

  return fc.record({
    body,
    deadline: deadlineHeader,
    traceparent: traceparentHeader,
    extra: extraHeaders,
    contentType,
    replyMode: fc.oneof({ weight: 7, arbitrary: fc.constant<ReplyMode>('ours') }, { weight: 1, arbitrary: fc.constantFrom<ReplyMode>('none', 'empty', 'nowhere') }),
    idMode: fc.oneof({ weight: 6, arbitrary: fc.constant<IdMode>('correlation') }, { weight: 2, arbitrary: fc.constant<IdMode>('message') }, { weight: 1, arbitrary: fc.constant<IdMode>('neither') }),
    viaExchange: fc.boolean(),
    persistent: fc.boolean(),
    priority: fc.option(fc.integer({ min: 0, max: 255 }), { nil: undefined }),
    expiration: fc.constantFrom(undefined, '600000'),
    type: fc.option(shortText, { nil: undefined }),
  });
}

export type RawMessage = ReturnType<typeof rawMessages> extends fc.Arbitrary<infer T> ? T : never;
