// The cancel subscriber against a Redis that drops each connection right after
// it became ready, several times in a row (a flapping network or failover).
// ioredis' own re-subscribe left a rejected promise unhandled at that moment,
// which failed CI once; the store re-subscribes itself and catches failures.
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { silentLogger } from '@warren/logger';
import { Teardown, redisUrl, uniqueName, waitFor } from '@warren/testkit';
import { keys } from '../src/keys';
import { RedisStore } from '../src/redis-store';
import { watchUnhandledRejections } from '../../../test/support/hostile';
import { TestPrefix } from './support';

const td = new Teardown();
const tp = new TestPrefix();
td.add(() => tp.destroy());
afterAll(() => td.run());

/**
 * Forwards to Redis; while `flapsLeft` > 0, each new connection is cut as soon
 * as Redis' INFO reply (ioredis' ready check) has been relayed, so the client
 * turns ready and loses its socket in the same moment.
 */
class FlappingProxy {
  flapsLeft = 0;
  connections = 0;
  private readonly sockets = new Set<Socket>();
  private constructor(readonly server: Server) {}

  static async start(target: URL): Promise<FlappingProxy> {
    const server = createServer();
    const proxy = new FlappingProxy(server);
    server.on('connection', (client) => proxy.relay(client, target));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return proxy;
  }

  url(): string {
    const address = this.server.address();
    if (address === null || typeof address === 'string') throw new Error('not listening');
    return `redis://127.0.0.1:${address.port}`;
  }

  /** Cuts every open connection (the first, healthy one included). */
  cutAll(): void {
    for (const socket of this.sockets) socket.destroy();
  }

  close(): Promise<void> {
    this.cutAll();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private relay(client: Socket, target: URL): void {
    this.connections += 1;
    const flap = this.flapsLeft > 0;
    if (flap) this.flapsLeft -= 1;
    const upstream = createConnection(Number(target.port || 6379), target.hostname);
    for (const socket of [client, upstream]) {
      this.sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => {
        this.sockets.delete(socket);
        client.destroy();
        upstream.destroy();
      });
    }
    client.on('data', (chunk: Buffer) => upstream.write(chunk));
    upstream.on('data', (chunk: Buffer) => {
      client.write(chunk);
      if (flap && chunk.includes('redis_version')) {
        client.end();
        upstream.destroy();
      }
    });
  }
}

it('keeps its cancel subscription through connections lost right after ready, with no unhandled rejection', async () => {
  const unhandled = watchUnhandledRejections();
  td.add(() => unhandled.stop());

  const proxy = await FlappingProxy.start(new URL(redisUrl()));
  td.add(() => proxy.close());
  const k = keys(tp.prefix);
  const store = new RedisStore(proxy.url(), 300, k, silentLogger());
  td.add(() => store.close());
  expect(await store.ready(5000)).toBe(true);
  const instance = uniqueName('w');
  const cancelled: string[] = [];
  store.subscribeCancels(instance, (callId) => cancelled.push(callId), 100);
  const channel = k.cancelChannel(instance);
  await waitFor(async () => (await tp.redis.pubsub('NUMSUB', channel))[1] === 1, { message: 'first subscription' });

  proxy.flapsLeft = 20;
  proxy.cutAll();
  await waitFor(() => proxy.flapsLeft === 0, { timeoutMs: 20_000, message: 'twenty flapping connections' });
  // The next connection stays: the subscriber is back on its channel, and gets a cancel.
  await waitFor(async () => (await tp.redis.pubsub('NUMSUB', channel))[1] === 1, { timeoutMs: 10_000, message: 'subscribed again' });
  const callId = uniqueName('c');
  await tp.redis.publish(channel, callId);
  await waitFor(() => cancelled.includes(callId), { message: 'cancel received after the flaps' });
  await new Promise((resolve) => setImmediate(resolve));
  expect(unhandled.seen).toEqual([]);
}, 40_000);
