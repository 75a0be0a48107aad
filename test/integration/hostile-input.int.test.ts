// Hostile values end to end, HTTP → gateway → RabbitMQ → service (and the
// Warren client straight over AMQP): prototype pollution, deep nesting, huge
// numbers and strings, invalid UTF-8, and method names with control
// characters or path and pattern tricks. Each is rejected with the
// documented error or handled safely, and no method name, however chosen,
// creates an exchange or a queue: after hundreds of them the namespace holds
// exactly the fixed topology (checked with rabbitmqctl).
import fc from 'fast-check';
import { connectClient, startService, type RpcClient, type WarrenService } from '@warren/amqp';
import { startBroker, type Broker } from '../../broker/src';
import { ErrorCode, RpcInvalidMethodError, RpcNoRouteError, RpcUnreadableReplyError, type JsonValue } from '@warren/jsonrpc';
import { Teardown, amqpUrl, waitFor } from '@warren/testkit';
import { TestNamespace, publishRaw, queueDepth } from '../support/amqp';
import { assertResponse, httpRequest, rawHttp, routable, trickyMethodNames, watchUnhandledRejections, type RawResponse, type WireResponse } from '../support/hostile';
import { rabbitmqctl } from './faults/rabbitmqctl';

/** Distinct weird method names sent in the topology check; the report quotes it. */
export const weirdNameCount = 400;

const td = new Teardown();
const ns = new TestNamespace();
const urls = amqpUrl();
let broker: Broker;
let service: WarrenService;
let client: RpcClient;
let port: number;
let unhandled: ReturnType<typeof watchUnhandledRejections>;
/** What handlers saw: a prototype that changed, params that were not plain JSON. */
const anomalies: string[] = [];

beforeAll(async () => {
  unhandled = watchUnhandledRejections();
  td.add(() => ns.destroy());
  broker = await startBroker({ urls, namespace: ns.namespace, serviceName: ns.service('warren-broker'), port: 0, defaultMetrics: false, defaultTimeoutMs: 3000, maxTimeoutMs: 3000 });
  td.add(() => broker.close());
  port = Number(new URL(await broker.listen()).port);
  service = await startService({
    urls,
    namespace: ns.namespace,
    name: ns.service('hostile'),
    methods: {
      echo: {
        handler: (params) => {
          if (({} as Record<string, unknown>)['polluted'] !== undefined) anomalies.push('Object.prototype polluted');
          if (params !== undefined && params !== null && ![Object.prototype, Array.prototype].includes(Object.getPrototypeOf(params) as object)) anomalies.push('params with a foreign prototype');
          return (params ?? null) as JsonValue;
        },
      },
      add: { params: { type: 'array', items: { type: 'number' }, minItems: 2, maxItems: 2 }, handler: (p) => (p as number[]).reduce((a, b) => a + b, 0) },
      nest: {
        params: { type: 'array', items: { type: 'integer', minimum: 0, maximum: 100_000 }, minItems: 1, maxItems: 1 },
        handler: (p) => {
          const [depth] = p as [number];
          let v: JsonValue = 0;
          for (let i = 0; i < depth; i++) v = [v];
          return v;
        },
      },
      text: { params: { type: 'array', items: { type: 'integer', minimum: 0 }, minItems: 1, maxItems: 1 }, handler: (p) => 'x'.repeat((p as [number])[0]) },
    },
  });
  td.add(() => service.close());
  client = await connectClient({ urls, namespace: ns.namespace, defaultTimeoutMs: 3000 });
  td.add(() => client.close());
});

afterAll(async () => {
  await td.run();
  unhandled.stop();
});

afterEach(async () => {
  expect(anomalies).toEqual([]);
  expect(unhandled.seen).toEqual([]);
  expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  expect(Object.prototype.hasOwnProperty.call(Object.prototype, 'polluted')).toBe(false);
  // Still serving, both ways in.
  expect(await rpc('{"jsonrpc":"2.0","method":"add","params":[40,2],"id":"ok"}')).toEqual({ jsonrpc: '2.0', result: 42, id: 'ok' });
  await expect(client.call('add', [1, 1])).resolves.toBe(2);
});

async function post(body: string | Buffer): Promise<RawResponse> {
  return rawHttp(port, httpRequest('POST', '/rpc', [['Content-Type', 'application/json']], body));
}

async function rpc(body: string | Buffer): Promise<unknown> {
  const res = await post(body);
  expect(res.status).toBe(200);
  return JSON.parse(res.body.toString('utf8'));
}

async function single(body: string | Buffer): Promise<WireResponse> {
  const value = await rpc(body);
  assertResponse(value);
  return value;
}

describe('prototype pollution', () => {
  it.each([
    ['params.__proto__', '{"jsonrpc":"2.0","method":"echo","params":{"__proto__":{"polluted":"yes"},"a":1},"id":1}', { a: 1 }],
    ['params.constructor.prototype', '{"jsonrpc":"2.0","method":"echo","params":{"constructor":{"prototype":{"polluted":"yes"}},"b":2},"id":1}', { b: 2 }],
    ['nested in an array', '{"jsonrpc":"2.0","method":"echo","params":[{"__proto__":{"polluted":"yes"}},{"x":{"__proto__":{"polluted":1}}}],"id":1}', [{}, { x: {} }]],
    ['escaped key', '{"jsonrpc":"2.0","method":"echo","params":{"\\u005f_proto__":{"polluted":"yes"}},"id":1}', {}],
  ])('drops %s before it reaches anyone', async (_name, body, result) => {
    expect(await single(body)).toEqual({ jsonrpc: '2.0', result, id: 1 });
  });

  it('does not take the request fields from a __proto__ member', async () => {
    // Read from the prototype, this would be a request with id 5; it is a notification without one.
    const res = await post('{"jsonrpc":"2.0","method":"echo","__proto__":{"id":5,"params":[1]}}');
    expect(res.status).toBe(204);
    expect(await single('{"__proto__":{"jsonrpc":"2.0","method":"echo","id":1}}')).toEqual({ jsonrpc: '2.0', id: null, error: { code: ErrorCode.InvalidRequest, message: 'Invalid Request' } });
  });

  it('is dropped on the AMQP side too (a raw publish to the service)', async () => {
    const answeredBefore = service.stats().answered;
    await publishRaw(ns.names.requestExchange, 'echo', Buffer.from('{"jsonrpc":"2.0","method":"echo","params":{"__proto__":{"polluted":"yes"}},"id":1}'), {});
    // A client call behind it on the same queue has been answered after it, by a handler that saw no pollution.
    await expect(client.call('echo', { safe: true })).resolves.toEqual({ safe: true });
    // Both reached the handler (the raw one was run, not dropped unseen), so the anomaly check covers it.
    await waitFor(() => service.stats().answered >= answeredBefore + 2, { message: 'both requests handled' });
  });
});

describe('deep nesting', () => {
  const nested = (depth: number): string => `${'['.repeat(depth)}${']'.repeat(depth)}`;

  it('accepts 64 levels (the request object included) and refuses 65 with -32700 too_deep', async () => {
    expect(await single(`{"jsonrpc":"2.0","method":"echo","params":${nested(63)},"id":1}`)).toMatchObject({ id: 1, result: expect.any(Array) });
    expect(await single(`{"jsonrpc":"2.0","method":"echo","params":${nested(64)},"id":1}`)).toEqual({ jsonrpc: '2.0', id: null, error: { code: ErrorCode.ParseError, message: 'Parse error', data: { reason: 'too_deep' } } });
  });

  it('refuses 500 000 levels of arrays or objects at once, without recursing', async () => {
    const started = Date.now();
    expect((await single(nested(500_000))).error).toEqual({ code: ErrorCode.ParseError, message: 'Parse error', data: { reason: 'too_deep' } });
    expect((await single(`${'{"a":'.repeat(150_000)}1${'}'.repeat(150_000)}`)).error?.data).toEqual({ reason: 'too_deep' });
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('does not count brackets inside strings (escaped quotes included)', async () => {
    const text = `\\"${'['.repeat(10_000)}{{{`;
    expect(await single(`{"jsonrpc":"2.0","method":"echo","params":["${text}"],"id":1}`)).toEqual({ jsonrpc: '2.0', result: [`"${'['.repeat(10_000)}{{{`], id: 1 });
  });

  it('refuses a too-deep body published straight to the service queue, and dead-letters it', async () => {
    const dead = ns.names.deadLetterQueue(ns.service('hostile'));
    const before = await queueDepth(dead);
    await publishRaw(ns.names.requestExchange, 'echo', Buffer.from(`{"jsonrpc":"2.0","method":"echo","params":${nested(200_000)},"id":1}`), {});
    await waitFor(async () => (await queueDepth(dead)) === before + 1);
  });

  it('answers a result nested deeper than the callers can read (70 levels) with an error, not silence until the deadline', async () => {
    expect(await single('{"jsonrpc":"2.0","method":"nest","params":[60],"id":1}')).toMatchObject({ id: 1, result: expect.any(Array) });
    const started = Date.now();
    const answer = await single('{"jsonrpc":"2.0","method":"nest","params":[70],"id":2}');
    expect(answer).toEqual({ jsonrpc: '2.0', id: 2, error: { code: ErrorCode.InternalError, message: 'Internal error', data: { reason: 'unreadable_reply', detail: 'too_deep' } } });
    expect(Date.now() - started).toBeLessThan(2000);
  });
});

describe('numbers', () => {
  it('turns numbers JSON cannot hold into what JavaScript reads them as: 1e309 → null (Infinity), 1e-400 → 0, -0 → 0', async () => {
    expect(await single('{"jsonrpc":"2.0","method":"echo","params":[1e309,-1e309,1e-400,-0,-0.0e5],"id":1}')).toEqual({ jsonrpc: '2.0', result: [null, null, 0, 0, 0], id: 1 });
  });

  it('echoes 1e309 and 1E400 as ids as written (protocol v1.1: every number id comes back as sent), and -0', async () => {
    expect((await post('{"jsonrpc":"2.0","method":"echo","params":[],"id":1e309}')).body.toString()).toBe('{"jsonrpc":"2.0","result":[],"id":1e309}');
    expect((await post('{"jsonrpc":"2.0","method":"echo","params":[],"id":1E400}')).body.toString()).toBe('{"jsonrpc":"2.0","result":[],"id":1E400}');
    expect((await post('{"jsonrpc":"2.0","method":"echo","params":[],"id":-0}')).body.toString()).toBe('{"jsonrpc":"2.0","result":[],"id":-0}');
  });

  it('echoes number ids byte for byte, beyond 2^53 too (params are numbers as JavaScript reads them)', async () => {
    const res = await post('{"jsonrpc":"2.0","method":"echo","params":[9007199254740993],"id":9007199254740993}');
    expect(res.body.toString()).toBe('{"jsonrpc":"2.0","result":[9007199254740992],"id":9007199254740993}');
    expect(await single('{"jsonrpc":"2.0","method":"echo","params":[],"id":"9007199254740993"}')).toEqual({ jsonrpc: '2.0', result: [], id: '9007199254740993' });
    expect(await single('{"jsonrpc":"2.0","method":"echo","params":[],"id":9007199254740991}')).toEqual({ jsonrpc: '2.0', result: [], id: 9007199254740991 });
  });

  it('lets a schema refuse what is not a finite number', async () => {
    expect((await single('{"jsonrpc":"2.0","method":"add","params":[1e309,1],"id":1}')).error?.code).toBe(ErrorCode.InvalidParams);
  });
});

describe('strings', () => {
  it('relays a 900 000-character string both ways, and refuses a body over 1 MiB with 413', async () => {
    const big = 'y'.repeat(900_000);
    expect(await single(`{"jsonrpc":"2.0","method":"echo","params":["${big}"],"id":1}`)).toEqual({ jsonrpc: '2.0', result: [big], id: 1 });
    const res = await post(`{"jsonrpc":"2.0","method":"echo","params":["${'z'.repeat(1024 * 1024)}"],"id":1}`);
    expect(res.status).toBe(413);
    expect(JSON.parse(res.body.toString())).toMatchObject({ id: null, error: { code: ErrorCode.InvalidRequest, data: { reason: 'too_large', limit: 1024 * 1024 } } });
  });

  it('answers a result larger than the callers can read (2 MiB) with an error, not silence until the deadline', async () => {
    const started = Date.now();
    const answer = await single('{"jsonrpc":"2.0","method":"text","params":[2097152],"id":3}');
    expect(answer).toEqual({ jsonrpc: '2.0', id: 3, error: { code: ErrorCode.InternalError, message: 'Internal error', data: { reason: 'unreadable_reply', detail: 'too_large' } } });
    // The gateway's answer above is the wire form of what the client rejects with here.
    await expect(client.call('text', [2097152])).rejects.toMatchObject({ constructor: RpcUnreadableReplyError, detail: 'too_large' });
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('refuses invalid UTF-8 (bad bytes, overlong forms, encoded surrogates) with -32700 invalid_utf8', async () => {
    for (const bad of [[0xc3, 0x28], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xff], [0xf4, 0x90, 0x80, 0x80]]) {
      const body = Buffer.concat([Buffer.from('{"jsonrpc":"2.0","method":"echo","params":["'), Buffer.from(bad), Buffer.from('"],"id":1}')]);
      expect(await single(body)).toEqual({ jsonrpc: '2.0', id: null, error: { code: ErrorCode.ParseError, message: 'Parse error', data: { reason: 'invalid_utf8' } } });
    }
  });

  it('carries escaped lone surrogates, NUL and a leading BOM as JSON allows', async () => {
    expect(await single('{"jsonrpc":"2.0","method":"echo","params":["\\ud800","a\\u0000b"],"id":1}')).toEqual({ jsonrpc: '2.0', result: ['\ud800', 'a\u0000b'], id: 1 });
    expect(await single(Buffer.from('\uFEFF{"jsonrpc":"2.0","method":"echo","params":[1],"id":1}'))).toEqual({ jsonrpc: '2.0', result: [1], id: 1 });
  });
});

describe('method names', () => {
  it.each([
    ['a NUL', 'add\u0000'], ['a newline', 'a\nb'], ['DEL', '\u007f'], ['an escape', '\u001b[31m'], ['empty', ''], ['256 bytes', 'x'.repeat(256)], ['256 bytes of é', 'é'.repeat(128)],
  ])('refuses %s with -32600 invalid_method_name, over HTTP and from the client', async (_what, method) => {
    expect(await single(JSON.stringify({ jsonrpc: '2.0', method, id: 7 }))).toEqual({ jsonrpc: '2.0', id: 7, error: { code: ErrorCode.InvalidRequest, message: 'Invalid Request', data: { reason: 'invalid_method_name' } } });
    await expect(client.call(method)).rejects.toBeInstanceOf(RpcInvalidMethodError);
    await expect(client.notify(method)).rejects.toBeInstanceOf(RpcInvalidMethodError);
  });

  it.each(['../', '../../etc/passwd', '#', '*', '*.#', 'amq.*', 'amq.direct', 'amq.rabbitmq.reply-to', '/', 'x'.repeat(255), 'é'.repeat(127), `${ns.namespace}.svc.hostile`, `${ns.namespace}.rpc`, 'rpc.'])(
    'answers %j with -32601 at once: a routing key on a fixed exchange, served by nobody',
    async (method) => {
      const started = Date.now();
      expect(await single(JSON.stringify({ jsonrpc: '2.0', method, id: 8 }))).toEqual({
        jsonrpc: '2.0',
        id: 8,
        error: { code: ErrorCode.MethodNotFound, message: expect.stringMatching(/^Method not found: /) as unknown, data: expect.objectContaining({ reason: 'no_route', method, namespace: ns.namespace }) as unknown },
      });
      await expect(client.call(method)).rejects.toMatchObject({ constructor: RpcNoRouteError, method });
      expect(Date.now() - started).toBeLessThan(1500);
    },
  );

  it('answers a misspelt method over POST /rpc with -32601 naming the namespace and the announced methods near it', async () => {
    expect(await single(JSON.stringify({ jsonrpc: '2.0', method: 'ech', id: 9 }))).toEqual({
      jsonrpc: '2.0',
      id: 9,
      error: { code: ErrorCode.MethodNotFound, message: `Method not found: "ech" is served by nobody in namespace "${ns.namespace}"; did you mean "echo"?`, data: { reason: 'no_route', method: 'ech', namespace: ns.namespace, suggestions: ['echo'] } },
    });
  });

  it(`creates no exchange or queue whatever the names (${weirdNameCount} distinct names, by HTTP, client calls and notifications)`, async () => {
    const names = new Set<string>(trickyMethodNames(ns.namespace));
    const generator = fc.oneof(
      fc.string({ unit: 'grapheme', minLength: 1, maxLength: 40 }),
      fc.string({ unit: 'binary', minLength: 1, maxLength: 20 }),
      fc.string({ maxLength: 12 }).map((s) => `amq.${s}`),
      fc.string({ maxLength: 12 }).map((s) => `${ns.namespace}.${s}`),
      fc.string({ maxLength: 12 }).map((s) => `${ns.namespace}.svc.${s}`),
      fc.string({ maxLength: 12 }).map((s) => `${ns.namespace}.evt.${s}`),
      fc.string({ maxLength: 12 }).map((s) => `../${s}/#/*`),
      fc.integer({ min: 200, max: 300 }).map((n) => 'm'.repeat(n)),
    );
    for (const name of fc.sample(generator, { numRuns: weirdNameCount * 3, seed: 7 })) {
      if (names.size >= weirdNameCount) break;
      names.add(name);
    }
    expect(names.size).toBe(weirdNameCount);
    const list = [...names];
    // Over HTTP, 50 to a batch: requests and notifications.
    for (let i = 0; i < list.length; i += 50) {
      const batch = list.slice(i, i + 50).flatMap((method, j) => [{ jsonrpc: '2.0', method, id: i + j }, { jsonrpc: '2.0', method }]);
      const answers = await rpc(JSON.stringify(batch));
      if (!Array.isArray(answers)) throw new Error('a batch answered with a non-array');
      expect(answers).toHaveLength(Math.min(50, list.length - i));
      for (const a of answers) {
        assertResponse(a);
        const method = list[a.id as number] as string;
        expect({ method, code: a.error?.code }).toEqual({ method, code: routable(method) ? ErrorCode.MethodNotFound : ErrorCode.InvalidRequest });
      }
    }
    // Straight from a Warren client too.
    const outcomes = await Promise.allSettled(list.flatMap((m) => [client.call(m, [], { timeoutMs: 2000 }), client.notify(m)]));
    const calls = outcomes.filter((_, i) => i % 2 === 0);
    expect(calls.every((o) => o.status === 'rejected')).toBe(true);

    const prefix = `${ns.namespace}.`;
    const listed = async (what: 'list_exchanges' | 'list_queues'): Promise<string[]> => {
      const stdout = await rabbitmqctl(['-q', what, 'name', '--no-table-headers'], 20_000);
      return stdout.split('\n').map((l) => l.trim()).filter((l) => l.startsWith(prefix)).sort();
    };
    const n = ns.names;
    const svc = [ns.service('hostile'), ns.service('warren-broker')];
    expect(await listed('list_exchanges')).toEqual([n.cancelExchange, n.controlExchange, n.deadLetterExchange, n.discoverExchange, n.eventExchange, n.requestExchange].sort());
    expect(await listed('list_queues')).toEqual([
      ...svc.flatMap((s) => [n.serviceQueue(s), n.deadLetterQueue(s)]),
      // Each client's reply queue and its restart probe.
      ...[client, broker.client, broker.service.client, service.client].flatMap((c) => [c.replyQueue, `${c.replyQueue}.probe`]),
      ...[service, broker.service].map((s) => n.instanceControlQueue(s.name, s.instanceId)),
      n.cancelQueue(service.name, service.instanceId), n.cancelQueue(broker.service.name, broker.service.instanceId),
    ].sort());
  }, 60_000);
});
