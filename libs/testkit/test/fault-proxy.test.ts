import { createConnection, createServer, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { FaultProxy, Teardown, once, waitFor } from '@warren/testkit';

interface Echo {
  port: number;
  /** Sockets the echo server accepted. */
  sockets: Socket[];
  /** Everything the echo server received, as text. */
  received(): string;
}

interface Client {
  socket: Socket;
  text(): string;
  closed(): boolean;
}

const td = new Teardown();
afterEach(() => td.run());

async function startEcho(): Promise<Echo> {
  const sockets: Socket[] = [];
  let received = '';
  const server = createServer((socket) => {
    sockets.push(socket);
    socket.on('error', () => undefined);
    socket.on('data', (data: Buffer) => {
      received += data.toString('utf8');
      socket.write(data);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  td.add(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('echo server has no port');
  return { port: address.port, sockets, received: () => received };
}

async function startProxy(port: number): Promise<FaultProxy> {
  const proxy = await FaultProxy.start({ target: { host: '127.0.0.1', port } });
  td.add(() => proxy.close());
  return proxy;
}

async function connect(port: number): Promise<Client> {
  const socket = createConnection({ host: '127.0.0.1', port });
  let text = '';
  let closed = false;
  socket.on('error', () => undefined);
  socket.on('data', (data: Buffer) => {
    text += data.toString('utf8');
  });
  socket.on('close', () => {
    closed = true;
  });
  td.add(() => socket.destroy());
  await once(socket, 'connect');
  return { socket, text: () => text, closed: () => closed };
}

async function echoed(client: Client, expected: string): Promise<void> {
  await waitFor(() => client.text() === expected, { timeoutMs: 2000, message: `echo of ${JSON.stringify(expected)}` });
}

describe('FaultProxy', () => {
  it('passes bytes both ways and counts connections', async () => {
    const echo = await startEcho();
    const proxy = await startProxy(echo.port);
    const client = await connect(proxy.port);
    client.socket.write('hello');
    await echoed(client, 'hello');
    expect(echo.received()).toBe('hello');
    expect(proxy.connectionCount).toBe(1);
    expect(proxy.totalConnections).toBe(1);
  });

  it('rewrites URLs to the proxy, keeping credentials, path and query', async () => {
    const proxy = await startProxy(1);
    expect(proxy.url('amqp://guest:pa%40ss@rabbit:5672/%2f?heartbeat=5')).toBe(
      `amqp://guest:pa%40ss@127.0.0.1:${proxy.port}/%2f?heartbeat=5`,
    );
    expect(proxy.url('redis://127.0.0.1:6379')).toBe(`redis://127.0.0.1:${proxy.port}`);
  });

  it('forUrl proxies the server a URL names; a scheme without a known default port needs one in the URL', async () => {
    const echo = await startEcho();
    const proxy = await FaultProxy.forUrl(`redis://127.0.0.1:${echo.port}/0`);
    td.add(() => proxy.close());
    const client = await connect(proxy.port);
    client.socket.write('via url');
    await echoed(client, 'via url');
    expect(() => FaultProxy.forUrl('http://h')).toThrow(/no default port for http:/);
  });

  it('cutAll closes both the client and the upstream side', async () => {
    const echo = await startEcho();
    const proxy = await startProxy(echo.port);
    const client = await connect(proxy.port);
    client.socket.write('x');
    await echoed(client, 'x');
    const upstream = echo.sockets[0];
    if (upstream === undefined) throw new Error('echo server saw no connection');
    const clientClosed = once(client.socket, 'close');
    const upstreamClosed = once(upstream, 'close');
    proxy.cutAll();
    expect(proxy.connectionCount).toBe(0);
    await Promise.all([clientClosed, upstreamClosed]);
  });

  it('stall holds bytes (also of new connections) until resume', async () => {
    const echo = await startEcho();
    const proxy = await startProxy(echo.port);
    const first = await connect(proxy.port);
    first.socket.write('a');
    await echoed(first, 'a');

    proxy.stall();
    first.socket.write('b');
    const second = await connect(proxy.port);
    second.socket.write('c');
    await waitFor(() => proxy.connectionCount === 2);
    await sleep(100);
    expect(echo.received()).toBe('a');
    expect(first.text()).toBe('a');
    expect(second.text()).toBe('');
    expect(first.closed() || second.closed()).toBe(false);

    proxy.resume();
    await echoed(first, 'ab');
    await echoed(second, 'c');
  });

  it('latency delays every chunk and keeps order', async () => {
    const echo = await startEcho();
    const proxy = await startProxy(echo.port);
    const client = await connect(proxy.port);
    const latencyMs = 50;
    proxy.setLatency(latencyMs);
    const started = process.hrtime.bigint();
    client.socket.write('slow');
    await echoed(client, 'slow');
    const elapsedMs = Number(process.hrtime.bigint() - started) / 1e6;
    expect(elapsedMs).toBeGreaterThanOrEqual(latencyMs);

    proxy.setLatency(80);
    client.socket.write('1');
    await sleep(5);
    proxy.setLatency(0);
    client.socket.write('2');
    await echoed(client, 'slow12');
    expect(() => proxy.setLatency(-1)).toThrow(RangeError);
  });

  it('refuse closes new connections but keeps open ones', async () => {
    const echo = await startEcho();
    const proxy = await startProxy(echo.port);
    const open = await connect(proxy.port);
    proxy.refuse(true);
    const refused = await connect(proxy.port);
    await once(refused.socket, 'close');
    expect(proxy.totalConnections).toBe(1);
    expect(proxy.refusedConnections).toBe(1);
    open.socket.write('still');
    await echoed(open, 'still');

    proxy.refuse(false);
    const later = await connect(proxy.port);
    later.socket.write('ok');
    await echoed(later, 'ok');
  });

  it('closes the client when the upstream refuses', async () => {
    const probe = await startEcho();
    const deadPort = probe.port;
    await td.run(); // frees the port: nothing listens there now
    const proxy = await startProxy(deadPort);
    const client = await connect(proxy.port);
    await once(client.socket, 'close');
    await waitFor(() => proxy.connectionCount === 0);
  });

  it('forgets a connection once both sides closed cleanly', async () => {
    const echo = await startEcho();
    const proxy = await startProxy(echo.port);
    const client = await connect(proxy.port);
    client.socket.write('bye');
    await echoed(client, 'bye');
    client.socket.end();
    await once(client.socket, 'close');
    await waitFor(() => proxy.connectionCount === 0, { message: 'pair released' });
  });

  it('close() is idempotent, ends every connection and stops listening', async () => {
    const echo = await startEcho();
    const proxy = await startProxy(echo.port);
    const port = proxy.port;
    const client = await connect(port);
    client.socket.write('x');
    await echoed(client, 'x');
    const first = proxy.close();
    expect(proxy.close()).toBe(first);
    await first;
    await proxy.close();
    expect(proxy.connectionCount).toBe(0);
    await waitFor(() => client.closed());
    const late = createConnection({ host: '127.0.0.1', port });
    td.add(() => late.destroy());
    await expect(once(late, 'connect')).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });
});
