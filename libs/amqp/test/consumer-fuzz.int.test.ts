// fast-check fuzz of the service consumer with raw AMQP messages, published
// with amqplib as a non-Warren client (or an attacker) would: random bodies,
// odd x-warren-deadline / traceparent / other headers, missing or foreign
// reply_to, missing correlation and message ids, wrong content types, batches
// of messages at once, and bodies over the decode limit. The service must
// answer exactly the JSON-RPC error docs/protocol.md promises when reply_to is
// set, dead-letter exactly the invalid bodies, answer expired bodies -32001
// without running them, never crash or lose its channel, and keep serving.
import amqp, { type Channel, type ConfirmChannel, type ChannelModel, type ConsumeMessage, type Options } from 'amqplib';
import fc from 'fast-check';
import { connectClient, startService, type RpcClient, type WarrenService } from '@warren/amqp';
import { ErrorCode, type JsonValue } from '@warren/jsonrpc';
import { Teardown, amqpUrl, waitFor as waitForCondition, type WaitForOptions } from '@warren/testkit';
import { TestNamespace } from '../../../test/support/amqp';
import { rawMessages, type RawMessage } from './consumer-fuzz-messages';
import {
  assertResponse, expectFor, matchAll, memoryLogger, watchUnhandledRejections, withoutPoison,
  type ItemExpectation, type PayloadExpectation, type WireResponse,
} from '../../../test/support/hostile';

/** Runs per property (each run publishes a batch of messages); the report quotes these. */
export const runs = { requests: 300, events: 200 } as const;
const maxBatch = 10;

const td = new Teardown();
const ns = new TestNamespace();
const urls = amqpUrl();
const log = memoryLogger('debug');
const svcName = ns.service('fuzz');
const requestQueue = ns.names.serviceQueue(svcName);
const eventQueue = ns.names.serviceEventQueue(svcName);
const deadQueue = ns.names.deadLetterQueue(svcName);
const traceparentPattern = /^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/;
/** Anything a handler saw that it should not have (a bad context, a poisoned prototype). */
const anomalies: string[] = [];
const notes: unknown[] = [];
let service: WarrenService;
let client: RpcClient;
let model: ChannelModel;
let pub: ConfirmChannel;
let inspect: Channel;
let replyQueue: string;
const replies: { correlationId: string | undefined; contentType: string | undefined; body: Buffer }[] = [];
let unhandled: ReturnType<typeof watchUnhandledRejections>;

beforeAll(async () => {
  unhandled = watchUnhandledRejections();
  td.add(() => ns.destroy());
  service = await startService({
    urls,
    namespace: ns.namespace,
    name: svcName,
    logger: log.logger,
    methods: {
      echo: {
        handler: (params, ctx) => {
          if (!traceparentPattern.test(ctx.traceparent)) anomalies.push(`traceparent ${ctx.traceparent}`);
          if (!Number.isFinite(ctx.deadline) || ctx.signal.aborted) anomalies.push(`deadline ${ctx.deadline}`);
          if (({} as Record<string, unknown>)['polluted'] !== undefined) anomalies.push('Object.prototype polluted');
          return (params ?? null) as JsonValue;
        },
      },
      add: { params: { type: 'array', items: { type: 'number' }, minItems: 2, maxItems: 2 }, handler: (p) => (p as number[]).reduce((a, b) => a + b, 0) },
    },
    notifications: { note: { handler: (params) => void notes.push(params) } },
  });
  td.add(() => service.close());
  client = await connectClient({ urls, namespace: ns.namespace, defaultTimeoutMs: 5000 });
  td.add(() => client.close());
  model = await amqp.connect(urls);
  // Told rather than thrown: a publisher connection RabbitMQ closes should fail the test that caused it, not crash jest.
  model.on('error', (err: Error) => anomalies.push(`publisher connection: ${err.message}`));
  td.add(() => model.close());
  pub = await model.createConfirmChannel();
  inspect = await model.createChannel();
  const sub: Channel = await model.createChannel();
  replyQueue = (await sub.assertQueue('', { exclusive: true, autoDelete: true })).queue;
  await sub.consume(replyQueue, (m: ConsumeMessage | null) => {
    if (m) replies.push({ correlationId: m.properties.correlationId as string | undefined, contentType: m.properties.contentType as string | undefined, body: m.content });
  }, { noAck: true });
});

afterAll(async () => {
  await td.run();
  unhandled.stop();
});

afterEach(async () => {
  // Keeps serving: a normal call through the Warren client.
  await expect(client.call('echo', ['still', 'here'])).resolves.toEqual(['still', 'here']);
  expect(unhandled.seen).toEqual([]);
  expect(anomalies).toEqual([]);
  // No error lines, and no channel lost to a poison message.
  expect(log.entries().filter((e) => Number(e['level']) >= 50 || /channel/.test(String(e['msg'])))).toEqual([]);
});

// ---------------------------------------------------------------------------
// Generators: consumer-fuzz-messages.ts.

const message = rawMessages(ns.namespace);
type Message = RawMessage;

// ---------------------------------------------------------------------------
// The oracle.

let seq = 0;

interface Planned {
  readonly key: string;
  readonly msg: Message;
  readonly expected: PayloadExpectation;
  /** Expected to be answered on our reply queue, with this correlation id (undefined: `anon.…`). */
  readonly replyKey: string | undefined | null;
  readonly deadLettered: boolean;
}

function plan(msg: Message): Planned {
  const key = `m${(++seq).toString(36)}-${Date.now().toString(36)}`;
  const expected = expectFor(msg.body);
  const items = expected.kind === 'single' ? [expected.item] : expected.items;
  const expired = msg.deadline.kind === 'past';
  // docs/protocol.md, Services, step 2: a body no handler can take is dead-lettered (a batch is answered item by item).
  const unservable = expected.kind === 'single' && (expected.item.kind === 'error' || expected.item.kind === 'response');
  // Step 1: a body taken after its deadline is not run but answered all the same (-32001 deadline_passed for
  // each request and for an unreadable body, an invalid batch entry's own error), so what is answered does not
  // depend on the deadline; only notifications go unanswered.
  const answered = msg.replyMode === 'ours' && items.some((i) => i.kind !== 'nothing');
  const replyKey = !answered ? null : msg.idMode === 'correlation' ? `c-${key}` : msg.idMode === 'message' ? key : undefined;
  return { key, msg, expected, replyKey, deadLettered: !expired && unservable };
}

function publish(p: Planned): void {
  const { msg } = p;
  const headers: Record<string, unknown> = { ...msg.extra };
  const deadline = msg.deadline.make();
  if (deadline !== undefined) headers['x-warren-deadline'] = deadline;
  else delete headers['x-warren-deadline'];
  if (msg.traceparent !== undefined) headers['traceparent'] = msg.traceparent;
  const props: Options.Publish = {
    headers,
    persistent: msg.persistent,
    ...(msg.idMode === 'correlation' ? { correlationId: `c-${p.key}`, messageId: p.key } : msg.idMode === 'message' ? { messageId: p.key } : {}),
    ...(msg.replyMode === 'ours' ? { replyTo: replyQueue } : msg.replyMode === 'empty' ? { replyTo: '' } : msg.replyMode === 'nowhere' ? { replyTo: `${ns.namespace}.reply.nobody-${p.key}` } : {}),
    ...(msg.contentType === undefined ? {} : { contentType: msg.contentType }),
    ...(msg.priority === undefined ? {} : { priority: msg.priority }),
    ...(msg.expiration === undefined ? {} : { expiration: msg.expiration }),
    ...(msg.type === undefined ? {} : { type: msg.type }),
  };
  // Straight into the queue (the default exchange), or routed like a call by a method the service serves.
  rawPublish(msg.viaExchange ? ns.names.requestExchange : '', msg.viaExchange ? 'echo' : requestQueue, msg.body, props);
}

/**
 * amqplib throws for header values it cannot encode, possibly after part of the message went out, which leaves
 * the channel's frames and confirm count off for every later publish: fail loudly, on a fresh channel, instead.
 */
function rawPublish(exchange: string, routingKey: string, content: Buffer, props: Options.Publish): void {
  try {
    pub.publish(exchange, routingKey, content, props);
  } catch (err) {
    const broken = pub;
    void broken.close().catch(() => undefined);
    channelReady = model.createConfirmChannel().then((ch) => void (pub = ch));
    throw new Error(`the test generated a message amqplib cannot encode: ${(err as Error).message}`, { cause: err });
  }
}
let channelReady: Promise<void> = Promise.resolve();

function callAnswered(r: WireResponse, e: Extract<ItemExpectation, { kind: 'call' }>): boolean {
  if (e.method === 'echo') return r.error === undefined && JSON.stringify(r.result) === JSON.stringify(withoutPoison(e.params ?? null));
  if (e.method === 'add') {
    const p = e.params;
    if (Array.isArray(p) && p.length === 2 && p.every((n) => Number.isSafeInteger(n))) return r.result === (p[0] as number) + (p[1] as number);
    return r.error === undefined || r.error.code === ErrorCode.InvalidParams;
  }
  // Requests for anything else reach this service's queue but no handler: -32601 (a notification name included).
  return r.error?.code === ErrorCode.MethodNotFound;
}

function checkReply(reply: { contentType: string | undefined; body: Buffer }, p: Planned): void {
  expect(reply.contentType).toBe('application/json');
  const value = JSON.parse(reply.body.toString('utf8')) as unknown;
  const items = (p.expected.kind === 'single' ? [p.expected.item] : p.expected.items).filter((i) => i.kind !== 'nothing');
  const answers = p.expected.kind === 'batch' ? value : [value];
  if (!Array.isArray(answers)) throw new Error(`a batch answered with ${JSON.stringify(value)}`);
  if (p.msg.deadline.kind === 'past') {
    // One answer per answerable item: -32001 deadline_passed, or an invalid entry's own error.
    expect(answers).toHaveLength(items.length);
    const ownErrors = new Set(items.flatMap((i) => (i.kind === 'error' ? [i.code] : [])));
    for (const a of answers as WireResponse[]) {
      const passed = a.error?.code === ErrorCode.DeadlineExceeded && (a.error.data as { reason?: string } | undefined)?.reason === 'deadline_passed';
      if (!passed && !ownErrors.has(a.error?.code ?? 0)) throw new Error(`expired body answered ${JSON.stringify(a)}`);
    }
    return;
  }
  for (const a of answers) assertResponse(a);
  if (!matchAll(answers as WireResponse[], items, callAnswered)) {
    throw new Error(`wrong answer ${JSON.stringify(value).slice(0, 500)} to ${JSON.stringify(p.msg.body.toString('latin1').slice(0, 300))}; expected ${JSON.stringify(items)}`);
  }
}

/** Messages ready in a queue, read on a channel of the test's own connection (cheap enough to poll). */
async function queueDepth(queue: string): Promise<number> {
  return (await inspect.checkQueue(queue)).messageCount;
}

/** waitFor, with the service's last log lines in the error: a stalled consumer says why there. */
async function waitFor(predicate: () => boolean | Promise<boolean>, options: WaitForOptions = {}): Promise<void> {
  try {
    await waitForCondition(predicate, options);
  } catch (err) {
    throw new Error(`${(err as Error).message}; stats ${JSON.stringify(service.stats())}; last log lines:\n${log.lines.slice(-10).join('\n')}`, { cause: err });
  }
}

function settled(): number {
  const s = service.stats();
  return s.answered + s.deadLettered + s.expired + s.answeredFromStore;
}

// ---------------------------------------------------------------------------

describe('request queue', () => {
  it(`answers, dead-letters or drops every raw message exactly as documented (${runs.requests} runs of up to ${maxBatch} messages)`, async () => {
    const seen = { messages: 0, answered: 0, deadLettered: 0, expired: 0, anonymous: 0 };
    // Replies already checked: one that turns up later (past the run's sentinel) is an extra answer.
    let checked = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(message, { minLength: 1, maxLength: maxBatch }), async (batch) => {
        await channelReady;
        const before = settled();
        const deadBefore = await queueDepth(deadQueue);
        expect(replies.slice(checked)).toEqual([]);
        replies.length = 0;
        const planned = batch.map(plan);
        for (const p of planned) publish(p);
        await pub.waitForConfirms();
        await waitFor(() => settled() - before === planned.length, { message: `the service settles all ${planned.length} messages`, timeoutMs: 10_000 });
        // A normal call after them: its answer comes after every answer the batch produced (one channel, in order).
        await expect(client.call('echo', ['sentinel'])).resolves.toEqual(['sentinel']);
        const expectDead = planned.filter((p) => p.deadLettered).length;
        await waitFor(async () => (await queueDepth(deadQueue)) - deadBefore >= expectDead, { message: `${expectDead} dead-lettered` }).catch(async (e: unknown) => {
          const dead = planned.filter((p) => p.deadLettered).map((p) => ({ body: p.msg.body.toString('latin1').slice(0, 120), deadline: String(p.msg.deadline.make()), extra: p.msg.extra }));
          throw new Error(`${(await queueDepth(deadQueue)) - deadBefore} of ${expectDead} dead-lettered; expected: ${JSON.stringify(dead)}`, { cause: e });
        });
        expect((await queueDepth(deadQueue)) - deadBefore).toBe(expectDead);
        const byKey = new Map(planned.filter((p) => typeof p.replyKey === 'string').map((p) => [p.replyKey as string, p]));
        const anonymous = planned.filter((p) => p.replyKey === undefined);
        const anonReplies = replies.filter((r) => r.correlationId?.startsWith('anon.'));
        expect(anonReplies.length).toBe(anonymous.length);
        for (const r of replies) {
          if (r.correlationId?.startsWith('anon.')) continue;
          const p = byKey.get(r.correlationId ?? '');
          if (!p) throw new Error(`unexpected reply ${r.correlationId}: ${r.body.toString().slice(0, 300)}`);
          byKey.delete(r.correlationId as string);
          checkReply(r, p);
        }
        expect([...byKey.keys()]).toEqual([]);
        // Anonymous answers cannot be told apart: each must fit one anonymous message.
        for (const r of anonReplies) {
          const fits = anonymous.findIndex((p) => {
            try {
              checkReply(r, p);
              return true;
            } catch {
              return false;
            }
          });
          if (fits < 0) throw new Error(`anonymous reply fits no message: ${r.body.toString().slice(0, 300)}`);
          anonymous.splice(fits, 1);
        }
        seen.messages += planned.length;
        seen.answered += planned.filter((p) => p.replyKey !== null).length;
        seen.deadLettered += expectDead;
        seen.expired += planned.filter((p) => p.msg.deadline.kind === 'past').length;
        seen.anonymous += anonReplies.length;
        checked = replies.length;
      }),
      { numRuns: runs.requests },
    );
    await expect(client.call('echo', ['sentinel'])).resolves.toEqual(['sentinel']);
    expect(replies.slice(checked)).toEqual([]);
    // Every branch was reached many times.
    expect(seen.messages).toBeGreaterThan(runs.requests * 3);
    expect(seen.answered).toBeGreaterThan(seen.messages * 0.4);
    expect(seen.deadLettered).toBeGreaterThan(seen.messages * 0.05);
    expect(seen.expired).toBeGreaterThan(seen.messages * 0.05);
    expect(seen.anonymous).toBeGreaterThan(0);
  }, 90_000);

  it('answers a body over the 1 MiB decode limit (2 MiB) with -32700 too_large and dead-letters it, with or without reply_to', async () => {
    const deadBefore = await queueDepth(deadQueue);
    replies.length = 0;
    const huge = Buffer.from(JSON.stringify({ jsonrpc: '2.0', method: 'echo', params: ['x'.repeat(2 * 1024 * 1024)], id: 1 }));
    pub.publish('', requestQueue, huge, { correlationId: 'huge-1', replyTo: replyQueue });
    pub.publish('', requestQueue, huge, { correlationId: 'huge-2' });
    pub.publish('', requestQueue, Buffer.alloc(2 * 1024 * 1024, 0xff), { correlationId: 'huge-3', replyTo: replyQueue });
    await pub.waitForConfirms();
    await waitFor(async () => (await queueDepth(deadQueue)) - deadBefore === 3, { message: 'three dead-lettered' });
    await waitFor(() => replies.length === 2);
    for (const r of replies) {
      expect(JSON.parse(r.body.toString())).toEqual({ jsonrpc: '2.0', id: null, error: { code: ErrorCode.ParseError, message: 'Parse error', data: { reason: 'too_large' } } });
    }
    expect(replies.map((r) => r.correlationId).sort()).toEqual(['huge-1', 'huge-3']);
  });
});

describe('forged x-death headers', () => {
  it('dead-letters an invalid body whose x-death list holds non-tables (which crashes a RabbitMQ 3.10 queue when it dead-letters it)', async () => {
    const deadBefore = await queueDepth(deadQueue);
    const byHand = (): number => log.entries().filter((e) => e['msg'] === 'message with a malformed x-death header dead-lettered by hand').length;
    const byHandBefore = byHand();
    const forged: unknown[] = [[1, 2], ['x'], [null], [[1]], [{ a: 1 }, 7]];
    const fine: unknown[] = [[], [{ count: 1, reason: 'rejected', queue: 'q' }], 'not a list', { a: 1 }];
    replies.length = 0;
    for (const [i, xDeath] of [...forged, ...fine].entries()) rawPublish('', requestQueue, Buffer.from('{"jsonrpc":"2.0","method":'), { correlationId: `xd-${i}`, replyTo: replyQueue, headers: { 'x-death': xDeath } });
    await pub.waitForConfirms();
    await waitFor(async () => (await queueDepth(deadQueue)) - deadBefore === forged.length + fine.length, { message: 'all dead-lettered' });
    // Every caller got its -32700, and the queue kept its consumer (no crash, no cancel).
    await waitFor(() => replies.length === forged.length + fine.length);
    for (const r of replies) expect(JSON.parse(r.body.toString())).toMatchObject({ id: null, error: { code: ErrorCode.ParseError } });
    expect(log.entries().filter((e) => e['msg'] === 'consumer cancelled by the broker')).toEqual([]);
    expect(byHand() - byHandBefore).toBe(forged.length);
  });
});

describe('event queue', () => {
  it(`acks everything on the event queue, runs only real notifications and never answers (${runs.events} runs of up to ${maxBatch} messages)`, async () => {
    let total = 0;
    replies.length = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(message, { minLength: 1, maxLength: maxBatch }), async (batch) => {
        await channelReady;
        const notifiedBefore = service.stats().notified;
        const notesBefore = notes.length;
        // An answer that came after the previous run's check would be one too.
        expect(replies).toEqual([]);
        let expectNotified = 0;
        let expectNotes = 0;
        for (const msg of batch) {
          const e = expectFor(msg.body);
          const items = e.kind === 'single' ? [e.item] : e.items;
          // A notification is a valid request without an id; the event consumer runs each one it finds.
          const found = (e.kind === 'batch' || e.item.kind !== 'error')
            ? items.filter((i) => i.kind === 'nothing').length
            : 0;
          expectNotified += found;
          expectNotes += countNotes(msg.body);
          rawPublish('', eventQueue, msg.body, { headers: { ...msg.extra, ...(msg.traceparent === undefined ? {} : { traceparent: msg.traceparent }) }, replyTo: replyQueue, correlationId: `e-${++seq}` });
        }
        // A notification of our own last: once it ran, everything before it was taken.
        pub.publish('', eventQueue, Buffer.from('{"jsonrpc":"2.0","method":"note","params":["sentinel"]}'), {});
        await pub.waitForConfirms();
        await waitFor(() => service.stats().notified - notifiedBefore === expectNotified + 1, { message: `${expectNotified + 1} notifications run` });
        await waitFor(async () => (await queueDepth(eventQueue)) === 0);
        expect(notes.length - notesBefore).toBe(expectNotes + 1);
        // Notifications are never answered, whatever reply_to says.
        await expect(client.call('echo', ['sentinel'])).resolves.toEqual(['sentinel']);
        expect(replies).toEqual([]);
        total += batch.length;
      }),
      { numRuns: runs.events },
    );
    await expect(client.call('echo', ['sentinel'])).resolves.toEqual(['sentinel']);
    expect(replies).toEqual([]);
    expect(total).toBeGreaterThan(runs.events * 3);
  }, 90_000);
});


/** Notifications named `note` in a body, counted from the specification (valid, no id). */
function countNotes(bytes: Buffer): number {
  const e = expectFor(bytes);
  if (e.kind === 'single' && e.item.kind === 'error') return 0;
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString('utf8'));
  } catch {
    return 0;
  }
  const items = Array.isArray(value) ? value : [value];
  return items.filter((i) => typeof i === 'object' && i !== null && (i as Record<string, unknown>)['method'] === 'note' && expectItemIsNotification(i)).length;
}

function expectItemIsNotification(i: object): boolean {
  const e = expectFor(Buffer.from(JSON.stringify(i)));
  return e.kind === 'single' && e.item.kind === 'nothing';
}
