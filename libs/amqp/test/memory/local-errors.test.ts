import { AvailabilityGate, type CallOptions, type RpcClient } from '@warren/amqp';
import { MemoryChannel } from '@warren/amqp-transport';
import {
  ErrorCode, InvalidParamsError, JsonRpcError, MethodNotFoundError, RpcAbortedError, RpcBufferFullError, RpcConnectionLostError,
  RpcInvalidMethodError, RpcNoConsumersError, RpcNoRouteError, RpcNotConfirmedError, RpcPendingLimitError, RpcReplyQueueLostError,
  RpcShuttingDownError, RpcTimeoutError, RpcTooLargeError, RpcUnreadableReplyError, failureResponse, isLocalError, requestMessage,
  toWireError, type ErrorObject, type LocalError, type Params,
} from '@warren/jsonrpc';
import { World, useWorld, rejection, settleTicks, until } from './world';

let w: World;
useWorld((made) => (w = made));
afterEach(() => jest.restoreAllMocks());

/** One way to make the call: `call` (rejects: the local error) or `request` (never rejects: the error response). */
type Send = (client: RpcClient, method: string, params?: Params, opts?: Omit<CallOptions, 'id'>) => Promise<unknown>;
const viaCall: Send = (c, m, p, o) => rejection(c.call(m, p, o));
const viaRequest: Send = (c, m, p, o) => c.request(requestMessage(m, p, 7), o);

let services = 0;
/** A new method whose queue is bound but has no consumer (its only instance stopped): calls to it wait. */
async function unserved(): Promise<string> {
  const name = `gone${++services}`;
  const s = await w.service({ name, methods: { [`${name}.run`]: { handler: () => 'ran' } } });
  await until(s.close());
  return `${name}.run`;
}

/** Makes the next publish on any memory channel behave as `publish` says (a nack, a throw, a silence...). */
function nextPublish(publish: (callback: ((err: unknown) => void) | undefined) => boolean): void {
  jest.spyOn(MemoryChannel.prototype, 'publish').mockImplementationOnce((_exchange, _key, _content, _options, callback) => publish(callback));
}

interface Case {
  readonly name: string;
  /** The local error's class and the fields it carries (code, retryable and its own). */
  readonly local: { readonly constructor: abstract new (...args: never[]) => LocalError; readonly code: string; readonly retryable: boolean; readonly [field: string]: unknown };
  /** The wire error docs/errors.md promises for it: what `request()`, a gateway or a relay answers. */
  readonly wire: ErrorObject;
  /** Brings the failure about in this test's World, making the call with `send`. */
  readonly provoke: (send: Send) => Promise<unknown>;
}

const cases: Case[] = [
  {
    name: 'the deadline passes',
    local: { constructor: RpcTimeoutError, code: 'RPC_TIMEOUT', retryable: false, noTimeLeft: false },
    wire: { code: -32001, message: 'Deadline exceeded' },
    provoke: async (send) => until(send(await w.client(), await unserved(), [], { timeoutMs: 100 })),
  },
  {
    name: 'the inherited deadline has passed already',
    local: { constructor: RpcTimeoutError, code: 'RPC_TIMEOUT', retryable: false, noTimeLeft: true },
    wire: { code: -32001, message: 'Deadline exceeded', data: { reason: 'no_time_left' } },
    provoke: async (send) => send(await w.client(), 'x', [], { deadline: Date.now() - 1 }),
  },
  {
    name: 'the caller aborts',
    local: { constructor: RpcAbortedError, code: 'RPC_ABORTED', retryable: false, reason: 'user left' },
    wire: { code: -32003, message: 'Cancelled', data: { reason: 'user left' } },
    provoke: async (send) => {
      const ac = new AbortController();
      ac.abort('user left');
      return send(await w.client(), 'x', [], { signal: ac.signal });
    },
  },
  {
    // The reply channel's close is heard before the connection's loss: `reply_channel_closed` (`connection_lost` when it is the other way round).
    name: 'the connection goes (direct reply-to)',
    local: { constructor: RpcConnectionLostError, code: 'RPC_CONNECTION_LOST', retryable: false, reason: 'reply_channel_closed' },
    wire: { code: -32007, message: 'Connection lost', data: { reason: 'reply_channel_closed' } },
    provoke: async (send) => {
      const connection = w.bus.connect();
      const client = await w.client({ connection, replyMode: 'direct', defaultTimeoutMs: 60_000 });
      const call = send(client, await unserved());
      await settleTicks();
      await connection.simulateLoss();
      return call;
    },
  },
  {
    name: 'the publish was not confirmed when the channel died',
    local: { constructor: RpcConnectionLostError, code: 'RPC_CONNECTION_LOST', retryable: false, reason: 'unconfirmed_at_disconnect' },
    wire: { code: -32007, message: 'Connection lost', data: { reason: 'unconfirmed_at_disconnect' } },
    provoke: async (send) => {
      const connection = w.bus.connect();
      const client = await w.client({ connection, defaultTimeoutMs: 60_000 });
      nextPublish((callback) => {
        queueMicrotask(() => {
          void connection.simulateLoss();
          callback?.(new Error('unconfirmed'));
        });
        return true;
      });
      return until(send(client, 'x'));
    },
  },
  {
    name: 'the reply queue expired while the client was away',
    local: { constructor: RpcReplyQueueLostError, code: 'RPC_REPLY_QUEUE_LOST', retryable: false },
    wire: { code: -32007, message: 'Connection lost', data: { reason: 'reply_queue_lost' } },
    provoke: async (send) => {
      const connection = w.bus.connect();
      const client = await w.client({ connection, defaultTimeoutMs: 60_000 });
      const call = send(client, await unserved());
      await settleTicks();
      await connection.simulateLoss();
      const other = await w.bus.connect().model?.createChannel();
      await other?.deleteQueue(client.replyQueue);
      return until(call);
    },
  },
  {
    name: 'maxPending calls wait already',
    local: { constructor: RpcPendingLimitError, code: 'RPC_PENDING_LIMIT', retryable: true, limit: 1 },
    wire: { code: -32004, message: 'Overloaded', data: { reason: 'too_many_pending_calls', limit: 1 } },
    provoke: async (send) => {
      const client = await w.client({ maxPending: 1 });
      void rejection(client.call(await unserved(), [], { timeoutMs: 60_000 }));
      return send(client, 'x');
    },
  },
  {
    name: 'the offline buffer is full',
    local: { constructor: RpcBufferFullError, code: 'RPC_BUFFER_FULL', retryable: true, limit: 1 },
    wire: { code: -32004, message: 'Overloaded', data: { reason: 'offline_buffer_full', limit: 1 } },
    provoke: async (send) => {
      const connection = w.bus.connect();
      const client = await w.client({ connection, maxBuffered: 1 });
      await connection.simulateLoss();
      void rejection(client.call('held'));
      return send(client, 'x');
    },
  },
  {
    name: 'the client is closed',
    local: { constructor: RpcShuttingDownError, code: 'RPC_SHUTTING_DOWN', retryable: true },
    wire: { code: -32008, message: 'Shutting down' },
    provoke: async (send) => {
      const client = await w.client();
      await until(client.close());
      return send(client, 'x');
    },
  },
  {
    name: 'the broker nacks the request',
    local: { constructor: RpcNotConfirmedError, code: 'RPC_NOT_CONFIRMED', retryable: true, reason: 'not_confirmed' },
    wire: { code: -32002, message: 'Service unavailable', data: { reason: 'not_confirmed' } },
    provoke: async (send) => {
      const client = await w.client();
      nextPublish((callback) => (queueMicrotask(() => callback?.(new Error('nacked'))), true));
      return until(send(client, 'x'));
    },
  },
  {
    name: 'the publish throws',
    local: { constructor: RpcNotConfirmedError, code: 'RPC_NOT_CONFIRMED', retryable: true, reason: 'publish_failed' },
    wire: { code: -32002, message: 'Service unavailable', data: { reason: 'publish_failed' } },
    provoke: async (send) => {
      const client = await w.client();
      nextPublish(() => {
        throw new Error('channel closing');
      });
      return send(client, 'x');
    },
  },
  {
    name: 'nothing is bound for the method',
    local: { constructor: RpcNoRouteError, code: 'RPC_NO_ROUTE', retryable: false, method: 'no.such' },
    wire: { code: -32601, message: 'Method not found: "no.such" is served by nobody in namespace "warren"', data: { reason: 'no_route', method: 'no.such', namespace: 'warren', suggestions: [] } },
    provoke: async (send) => until(send(await w.client(), 'no.such', [], { timeoutMs: 60_000 })),
  },
  {
    name: 'the availability check finds no consumer',
    local: { constructor: RpcNoConsumersError, code: 'RPC_NO_CONSUMERS', retryable: true, service: 'calc', method: 'calc.add', queued: 2 },
    wire: { code: -32002, message: 'Service unavailable: no instance of calc is running', data: { reason: 'no_consumers', service: 'calc', method: 'calc.add', queued: 2 } },
    provoke: async (send) => {
      const client = await w.client();
      const gate = new AvailabilityGate({ serviceOf: () => 'calc' }, { read: () => Promise.resolve({ messages: 2, consumers: 0 }) });
      client.checkAvailability((m) => gate.check(m));
      return until(send(client, 'calc.add', [1, 2], { timeoutMs: 60_000 }));
    },
  },
  {
    name: 'the request is over maxMessageBytes',
    local: { constructor: RpcTooLargeError, code: 'RPC_TOO_LARGE', retryable: false, limit: 64 },
    wire: { code: -32600, message: 'Request too large', data: { reason: 'too_large', limit: 64 } },
    provoke: async (send) => send(await w.client({ maxMessageBytes: 64 }), 'x', ['a'.repeat(100)]),
  },
  {
    name: 'the method cannot be a routing key',
    local: { constructor: RpcInvalidMethodError, code: 'RPC_INVALID_METHOD', retryable: false },
    wire: { code: -32600, message: 'Invalid Request', data: { reason: 'invalid_method_name' } },
    provoke: async (send) => send(await w.client(), 'bad\nname'),
  },
  {
    name: 'the reply is not JSON-RPC',
    local: { constructor: RpcUnreadableReplyError, code: 'RPC_UNREADABLE_REPLY', retryable: false, detail: 'invalid_json' },
    wire: { code: -32603, message: 'Internal error', data: { reason: 'unreadable_reply', detail: 'invalid_json' } },
    provoke: async (send) => {
      const client = await w.client({ defaultTimeoutMs: 60_000 });
      const callId = client.nextCallId();
      const call = send(client, await unserved());
      const other = await w.bus.connect().model?.createChannel();
      other?.publish('', client.replyQueue, Buffer.from('not json'), { correlationId: callId });
      return until(call);
    },
  },
];

describe('RpcClient rejects with a local error for each failure on its side', () => {
  it('covers every local code', () => {
    expect(new Set(cases.map((c) => c.local.code)).size).toBe(13);
  });

  it.each(cases)('$local.code when $name; request() answers its toWireError', async ({ local, wire, provoke }) => {
    const err = await provoke(viaCall);
    expect(isLocalError(err)).toBe(true);
    expect(err).not.toBeInstanceOf(JsonRpcError);
    expect(err).toMatchObject(local);
    const mapped = toWireError(err as LocalError).toErrorObject();
    expect(mapped).toEqual(wire);
    await expect(provoke(viaRequest)).resolves.toEqual(failureResponse(7, mapped));
  });
});

describe('notify and cancelOnWire fail with local errors too', () => {
  it('RPC_NOT_CONFIRMED (not_confirmed_in_time) when RabbitMQ does not confirm a notification in time', async () => {
    const client = await w.client();
    nextPublish(() => true); // never confirmed
    const err = await until(rejection(client.notify('audit.log', [], { timeoutMs: 50 })));
    expect(err).toMatchObject({ constructor: RpcNotConfirmedError, reason: 'not_confirmed_in_time', retryable: true });
    expect(toWireError(err as LocalError).toErrorObject()).toEqual({ code: -32002, message: 'Service unavailable', data: { reason: 'not_confirmed_in_time' } });
  });

  it('RPC_BUFFER_FULL (-32004, as docs/reliability.md says) for a notification the full offline buffer cannot hold', async () => {
    const connection = w.bus.connect();
    const client = await w.client({ connection, maxBuffered: 1 });
    await connection.simulateLoss();
    void rejection(client.call('held'));
    const err = await rejection(client.notify('audit.log'));
    expect(err).toMatchObject({ constructor: RpcBufferFullError, limit: 1 });
    expect(toWireError(err as LocalError).code).toBe(ErrorCode.Overloaded);
  });

  it.each([
    ['RPC_INVALID_METHOD', (c: RpcClient) => c.notify('')],
    ['RPC_TOO_LARGE', (c: RpcClient) => c.notify('audit.log', ['a'.repeat(100)])],
  ] as const)('%s before anything is published', async (code, notify) => {
    const client = await w.client({ maxMessageBytes: 64 });
    await expect(notify(client)).rejects.toMatchObject({ code });
  });

  it('RPC_NOT_CONFIRMED (publish_failed) for a cancelOnWire whose publish throws', async () => {
    const client = await w.client();
    nextPublish(() => {
      throw new Error('channel closing');
    });
    await expect(client.cancelOnWire('some.call')).rejects.toMatchObject({ constructor: RpcNotConfirmedError, reason: 'publish_failed', retryable: true });
  });

  it('RPC_CONNECTION_LOST (not_connected) for cancelOnWire while disconnected', async () => {
    const connection = w.bus.connect();
    const client = await w.client({ connection });
    await connection.simulateLoss();
    await expect(client.cancelOnWire('some.call')).rejects.toMatchObject({ constructor: RpcConnectionLostError, reason: 'not_connected' });
  });
});

describe('the other family: what a service answered stays a wire error', () => {
  it("a handler's error answer is its JsonRpcError subclass", async () => {
    await w.service({ name: 'strict', methods: { 'strict.check': { handler: () => Promise.reject(new InvalidParamsError('no', { field: 'a' })) } } });
    const err = await until(rejection((await w.client()).call('strict.check')));
    expect(err).toBeInstanceOf(InvalidParamsError);
    expect(isLocalError(err)).toBe(false);
    expect(err).toMatchObject({ code: ErrorCode.InvalidParams, message: 'no', data: { field: 'a' } });
  });

  it("a nested call's local error that escapes its handler answers that error's wire form", async () => {
    await w.service({ name: 'outer', methods: { 'outer.run': { handler: (_p, ctx) => ctx.client.call('no.such') } } });
    const err = await until(rejection((await w.client()).call('outer.run', [], { timeoutMs: 60_000 })));
    expect(err).toBeInstanceOf(MethodNotFoundError);
    expect(err).toMatchObject({ code: ErrorCode.MethodNotFound, data: { reason: 'no_route', method: 'no.such' } });
  });
});
