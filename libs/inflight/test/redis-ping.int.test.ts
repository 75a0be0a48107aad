// The Redis health check behind the broker's readiness probe: ready against the real Redis, and
// never waiting past its timeout, whatever the other end does.
import { createServer, type Server, type Socket } from 'node:net';
import { Teardown, redisUrl } from '@warren/testkit';
import { redisPing } from '../src/redis-ping';

const td = new Teardown();
afterAll(() => td.run());

async function listen(onSocket: (socket: Socket) => void): Promise<{ server: Server; url: string }> {
  const server = createServer(onSocket);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  td.add(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { server, url: `redis://127.0.0.1:${(server.address() as { port: number }).port}` };
}

it('answers ready from a live Redis, and again on the same connection', async () => {
  const redis = redisPing(redisUrl());
  td.add(async () => redis.close());
  expect(await redis.ping()).toEqual({ ok: true, state: 'ready' });
  expect(await redis.ping()).toEqual({ ok: true, state: 'ready' });
});

it('answers unreachable when nothing listens', async () => {
  expect(await redisPing('redis://127.0.0.1:1').ping()).toEqual({ ok: false, state: 'unreachable' });
});

it('answers timeout within its bound when the server accepts and never answers', async () => {
  const sockets: Socket[] = [];
  const { url } = await listen((s) => void sockets.push(s));
  td.add(async () => sockets.forEach((s) => s.destroy()));
  const redis = redisPing(url, 300);
  td.add(async () => redis.close());
  const started = Date.now();
  expect(await redis.ping()).toEqual({ ok: false, state: 'timeout' });
  expect(Date.now() - started).toBeLessThan(1500);
});

it('says a refused password is one (auth_failed), and shares one connection among concurrent pings', async () => {
  let connections = 0;
  const { url } = await listen((socket) => {
    connections++;
    // One reply per command (the client may send others, e.g. CLIENT SETINFO, in the same chunk).
    socket.on('data', (chunk: Buffer) => {
      for (const command of chunk.toString().split(/^\*/m).slice(1)) {
        const name = command.split('\r\n')[2]?.toUpperCase();
        socket.write(name === 'AUTH' ? '-WRONGPASS invalid username-password pair\r\n' : name === 'PING' ? '+PONG\r\n' : '+OK\r\n');
      }
    });
    socket.on('error', () => undefined);
  });
  const refused = redisPing(url.replace('redis://', 'redis://:secret@'));
  td.add(async () => refused.close());
  expect(await refused.ping()).toEqual({ ok: false, state: 'auth_failed' });
  const shared = redisPing(url);
  td.add(async () => shared.close());
  const before = connections;
  expect(await Promise.all([shared.ping(), shared.ping(), shared.ping()])).toEqual(Array(3).fill({ ok: true, state: 'ready' }));
  expect(connections - before).toBe(1);
});

it('answers closed once closed', async () => {
  const redis = redisPing(redisUrl());
  redis.close();
  expect(await redis.ping()).toEqual({ ok: false, state: 'closed' });
});
