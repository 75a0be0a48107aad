import { connectClient, startService, type RpcClient } from '@warren/amqp';
import { ErrorCode, RpcAbortedError, wireErrorOf } from '@warren/jsonrpc';
import { Teardown, amqpUrl, waitFor } from '@warren/testkit';
import amqp from 'amqplib';
import { TestNamespace } from '../../../test/support/amqp';

const td = new Teardown();
const ns = new TestNamespace();
const urls = amqpUrl();
let caller: RpcClient;
let other: RpcClient;
const started: string[] = [];
const stopped: string[] = [];

/** The wire code a call fails with: the worker's answer, or the wire form of the caller's own abort (RpcAbortedError). */
async function codeOf(p: Promise<unknown>): Promise<number | undefined> {
  try {
    await p;
    return undefined;
  } catch (err) {
    return wireErrorOf(err)?.code ?? -1;
  }
}

beforeAll(async () => {
  td.add(() => ns.destroy());
  const service = await startService({
    urls, namespace: ns.namespace, name: ns.service('slow'),
    methods: {
      wait: {
        handler: (_p, ctx) => new Promise((resolve) => {
          started.push(ctx.callId);
          const timer = setTimeout(() => resolve('finished'), 20_000);
          ctx.signal.addEventListener('abort', () => {
            clearTimeout(timer);
            stopped.push(ctx.callId);
            resolve('aborted');
          }, { once: true });
        }),
      },
    },
  });
  td.add(() => service.close());
  caller = await connectClient({ urls, namespace: ns.namespace, defaultTimeoutMs: 15_000 });
  td.add(() => caller.close());
  other = await connectClient({ urls, namespace: ns.namespace });
  td.add(() => other.close());
});
afterAll(() => td.run());

describe('cancellation on the wire (no in-flight store)', () => {
  it("a caller's abort stops the handler on its worker", async () => {
    const ac = new AbortController();
    const callId = caller.nextCallId();
    const call = caller.call('wait', [], { signal: ac.signal, id: 'a' });
    await waitFor(() => started.includes(callId), { message: 'handler started' });
    ac.abort();
    await expect(call).rejects.toBeInstanceOf(RpcAbortedError);
    await waitFor(() => stopped.includes(callId), { message: 'handler aborted on its worker' });
  });

  it("an abort's cancel carries the call's deadline, and an expiration that covers it (not 60 s)", async () => {
    // A queue of the test's own on NS.cancel reads the cancel as any instance would.
    const model = await amqp.connect(urls);
    td.add(() => model.close());
    const ch = await model.createChannel();
    const { queue } = await ch.assertQueue('', { exclusive: true });
    await ch.bindQueue(queue, ns.names.cancelExchange, '');
    const heard: amqp.ConsumeMessage[] = [];
    await ch.consume(queue, (m) => void (m && heard.push(m)), { noAck: true });
    const ac = new AbortController();
    const callId = caller.nextCallId();
    const before = Date.now();
    const call = caller.call('wait', [], { signal: ac.signal, timeoutMs: 600_000 });
    await waitFor(() => started.includes(callId), { message: 'handler started' });
    ac.abort();
    await expect(call).rejects.toBeInstanceOf(RpcAbortedError);
    await waitFor(() => heard.length > 0, { message: 'cancel heard' });
    const body = JSON.parse(heard[0]?.content.toString() ?? '{}') as { callId?: string; deadline?: number };
    expect(body.callId).toBe(callId);
    expect(body.deadline).toBeGreaterThanOrEqual(before + 600_000);
    expect(Number(heard[0]?.properties.expiration)).toBeGreaterThan(500_000);
  });

  it('a cancel from another process stops the call, and its caller gets -32003 from the worker', async () => {
    const callId = caller.nextCallId();
    const call = caller.call('wait', [], { id: 'b' });
    await waitFor(() => started.includes(callId), { message: 'handler started' });
    await other.cancelOnWire(callId, 'test');
    expect(await codeOf(call)).toBe(ErrorCode.Cancelled);
    expect(stopped).toContain(callId);
  });

  it('a cancel heard before the request arrives answers -32003 without running it', async () => {
    const callId = `${ns.namespace}.early.1`;
    await other.cancelOnWire(callId, 'test', Date.now() + 10_000);
    const model = await amqp.connect(urls);
    try {
      const ch = await model.createChannel();
      const { queue } = await ch.assertQueue('', { exclusive: true });
      const body = await new Promise<string>((resolve) => {
        void ch.consume(queue, (msg) => msg && resolve(msg.content.toString()), { noAck: true });
        // The cancel was confirmed (in the instance's cancel queue) before this request is published.
        ch.publish(ns.names.requestExchange, 'wait', Buffer.from('{"jsonrpc":"2.0","method":"wait","id":7}'), { replyTo: queue, correlationId: callId, contentType: 'application/json' });
      });
      expect(JSON.parse(body)).toMatchObject({ id: 7, error: { code: ErrorCode.Cancelled } });
      expect(started).not.toContain(callId);
    } finally {
      await model.close();
    }
  });

  it('drops a cancel message that does not fit, and keeps serving', async () => {
    const model = await amqp.connect(urls);
    try {
      const ch = await model.createChannel();
      for (const body of ['nope', '[]', '{"type":"cancel"}', '{"type":"cancel","callId":5}', '{"v":2,"type":"cancel","callId":"x"}']) ch.publish(ns.names.cancelExchange, '', Buffer.from(body));
      await ch.close();
    } finally {
      await model.close();
    }
    const ac = new AbortController();
    const call = caller.call('wait', [], { signal: ac.signal, id: 'c', timeoutMs: 5000 });
    await waitFor(() => started.length >= 3, { message: 'still serving' });
    ac.abort();
    expect(await codeOf(call)).toBe(ErrorCode.Cancelled);
  });
});
