// AmqpConnection's setups get amqplib's ChannelModel, an EventEmitter (the contract shows only part of it).
import type { EventEmitter } from 'node:events';
import { connectClient, startService } from '@warren/amqp';
import { AmqpConnection } from '@warren/amqp-transport';
import { ErrorCode, RpcBufferFullError, RpcShuttingDownError, RpcTimeoutError, wireErrorOf } from '@warren/jsonrpc';
import { Teardown, amqpUrl, waitFor } from '@warren/testkit';
import { createServer, type Server } from 'node:net';
import { TestNamespace, queueExists } from '../../../test/support/amqp';

const td = new Teardown();
const ns = new TestNamespace();
const urls = amqpUrl();
afterAll(() => td.run());
beforeAll(() => td.add(() => ns.destroy()));

/** A port where something accepts and immediately hangs up, like a dead cluster node behind a load balancer. */
async function deadNode(): Promise<string> {
  const server: Server = createServer((s) => s.destroy());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  td.add(() => new Promise((r) => server.close(r)));
  const port = (server.address() as { port: number }).port;
  const u = new URL(urls);
  u.host = `127.0.0.1:${port}`;
  return u.toString();
}

describe('connection', () => {
  it('tries cluster nodes in turn', async () => {
    const connection = new AmqpConnection({ urls: [await deadNode(), urls], socketTimeoutMs: 1000 });
    td.add(() => connection.close());
    await connection.start();
    expect(connection.state).toMatchObject({ type: 'open' });
  });

  it('leaves one close listener on an open connection: the one that notices its loss', async () => {
    const connection = new AmqpConnection({ urls });
    td.add(() => connection.close());
    let listeners = -1;
    await connection.onOpen(async (model) => void (listeners = (model as unknown as EventEmitter).listenerCount('close')));
    await connection.start();
    // Counted during setup: its own, and the one that fails a setup stuck on a dead connection.
    expect(listeners).toBe(2);
    await connection.simulateLoss();
    await waitFor(() => connection.state.type === 'open', { timeoutMs: 10_000 });
    let after = -1;
    await connection.onOpen(async (model) => void (after = (model as unknown as EventEmitter).listenerCount('close')));
    expect(after).toBe(1);
  });

  it('does not retry refused credentials', async () => {
    const bad = new URL(urls);
    bad.password = 'definitely-wrong';
    const connection = new AmqpConnection({ urls: bad.toString(), startTimeoutMs: 60_000 });
    td.add(() => connection.close());
    await expect(connection.start()).rejects.toThrow();
    expect(connection.state.type).toBe('closed');
  });

  it('gives up the first connection within startTimeoutMs', async () => {
    const connection = new AmqpConnection({ urls: await deadNode(), startTimeoutMs: 500, reconnect: { initialDelayMs: 50, maxDelayMs: 100 } });
    td.add(() => connection.close());
    await expect(connection.start()).rejects.toThrow();
  });

  it('close() is idempotent and ends a pending start', async () => {
    const connection = new AmqpConnection({ urls: await deadNode(), startTimeoutMs: 60_000, reconnect: { initialDelayMs: 200, maxDelayMs: 200 } });
    const starting = connection.start();
    await new Promise((r) => setTimeout(r, 50));
    await Promise.all([connection.close(), connection.close()]);
    await expect(starting).rejects.toThrow();
    expect(connection.state.type).toBe('closed');
  });
});

describe('bounds and leftovers', () => {
  it('holds calls made while disconnected only up to maxBuffered, then answers Overloaded', async () => {
    const connection = new AmqpConnection({ urls, reconnect: { initialDelayMs: 500, maxDelayMs: 500 } });
    await connection.start();
    td.add(() => connection.close());
    const client = await connectClient({ connection, namespace: ns.namespace, maxBuffered: 2 });
    td.add(() => client.close());
    await connection.simulateLoss();
    const held = [client.call('x', [], { timeoutMs: 100 }), client.call('x', [], { timeoutMs: 100 })];
    await expect(client.call('x', [], { timeoutMs: 100 })).rejects.toMatchObject({ constructor: RpcBufferFullError, limit: 2 });
    for (const call of held) await expect(call).rejects.toBeInstanceOf(RpcTimeoutError);
    expect(client.stats()).toMatchObject({ pending: 0 });
  });

  it('counts and drops a reply that comes after the deadline', async () => {
    const name = ns.service('late');
    const s = await startService({ urls, namespace: ns.namespace, name, methods: { 'late.work': { handler: () => new Promise((r) => setTimeout(() => r('done'), 300)) } } });
    td.add(() => s.close());
    const client = await connectClient({ urls, namespace: ns.namespace });
    td.add(() => client.close());
    // The service's own deadline is the same as the caller's; the handler ignores it, so the
    // service answers -32001 at the deadline, just after the caller gave up: a late reply.
    await expect(client.call('late.work', [], { timeoutMs: 100 }).catch(wireErrorOf)).resolves.toMatchObject({ code: ErrorCode.DeadlineExceeded });
    await waitFor(() => client.stats().lateReplies === 1);
    expect(client.stats().pending).toBe(0);
  });

  it('serves from a quorum queue', async () => {
    const name = ns.service('quorum');
    const s = await startService({ urls, namespace: ns.namespace, name, queueType: 'quorum', methods: { 'quorum.ping': { handler: () => 'pong' } } });
    td.add(() => s.close());
    const client = await connectClient({ urls, namespace: ns.namespace });
    td.add(() => client.close());
    await expect(client.call('quorum.ping')).resolves.toBe('pong');
  });

  it('deletes its named reply queue on close', async () => {
    const client = await connectClient({ urls, namespace: ns.namespace });
    const queue = client.replyQueue;
    expect(await queueExists(queue)).toBe(true);
    await client.close();
    await client.close();
    expect(await queueExists(queue)).toBe(false);
    await expect(client.call('x')).rejects.toBeInstanceOf(RpcShuttingDownError);
  });
});
