// TLS by configuration: `amqps://` URLs and `tls` options reach amqplib, and
// `rediss://` URLs and `tls` options reach ioredis. The test makes a
// self-signed CA-less certificate with openssl at run time and puts TLS
// terminating proxies (node:tls) in front of the real RabbitMQ and Redis,
// so the handshake is real and so is everything after it. Skipped where
// openssl is missing.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect as connectTcp, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createServer, type TLSSocket } from 'node:tls';
import { connectClient, startService } from '@warren/amqp';
import { AmqpConnection } from '@warren/amqp-transport';
import { InflightView } from '@warren/inflight';
import { Teardown, amqpUrl, redisUrl, spawnTs } from '@warren/testkit';
import { TestNamespace } from '../support/amqp';

const hasOpenssl = ((): boolean => {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

const td = new Teardown();
const ns = new TestNamespace();
let dir: string;
let certFile: string;
let cert: Buffer;
let key: Buffer;
let clientCert: Buffer;
let clientKey: Buffer;

interface TlsProxy {
  readonly port: number;
  /** Completed handshakes, with the name the client asked for (SNI). */
  readonly handshakes: { servername: string | false }[];
  /** Handshakes that failed (the client refused our certificate, or did not speak TLS). */
  readonly failures: string[];
}

/** A TLS server on 127.0.0.1 that forwards each connection, decrypted, to `target`. */
async function tlsProxy(target: string, extra: { requestCert?: boolean; ca?: Buffer } = {}): Promise<TlsProxy> {
  const { hostname, port } = new URL(target);
  const handshakes: TlsProxy['handshakes'] = [];
  const failures: string[] = [];
  const open = new Set<{ destroy(): void }>();
  const server = createServer({ key, cert, ...(extra.requestCert ? { requestCert: true, rejectUnauthorized: true, ca: extra.ca } : {}) }, (socket: TLSSocket) => {
    handshakes.push({ servername: socket.servername ?? false });
    const upstream = connectTcp({ host: hostname, port: Number(port) });
    open.add(socket).add(upstream);
    socket.pipe(upstream).pipe(socket);
    const end = (): void => {
      socket.destroy();
      upstream.destroy();
    };
    socket.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
  });
  server.on('tlsClientError', (err) => failures.push(err.message));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  td.add(() => new Promise<void>((resolve) => {
    server.close(() => resolve());
    // Whatever a failed test left connected must not hold the close.
    for (const socket of open) socket.destroy();
  }));
  return { port: (server.address() as AddressInfo).port, handshakes, failures };
}

function selfSigned(name: string, cn: string): { cert: Buffer; key: Buffer; certFile: string } {
  const keyFile = path.join(dir, `${name}.key`);
  const file = path.join(dir, `${name}.pem`);
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', keyFile, '-out', file, '-days', '1', '-subj', `/CN=${cn}`, '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1'], { stdio: 'ignore' });
  return { cert: readFileSync(file), key: readFileSync(keyFile), certFile: file };
}

const maybe = hasOpenssl ? describe : describe.skip;

maybe('TLS', () => {
  let amqps: TlsProxy;
  let rediss: TlsProxy;
  const user = new URL(amqpUrl());
  const credentials = `${user.username}:${user.password}`;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'warren-tls-'));
    td.add(() => rmSync(dir, { recursive: true, force: true }));
    td.add(() => ns.destroy());
    ({ cert, key, certFile } = selfSigned('server', 'localhost'));
    ({ cert: clientCert, key: clientKey } = selfSigned('client', 'warren-client'));
    amqps = await tlsProxy(amqpUrl());
    rediss = await tlsProxy(redisUrl());
  });
  afterAll(() => td.run());

  describe('amqps://', () => {
    it('connects through a real TLS handshake with the CA given in `tls`, and calls work over it', async () => {
      const urls = `amqps://${credentials}@localhost:${amqps.port}`;
      const before = amqps.handshakes.length;
      const service = await startService({ urls, tls: { ca: cert }, namespace: ns.namespace, name: ns.service('tls'), methods: { add: { handler: (p) => (p as number[]).reduce((a, b) => a + b, 0) } } });
      td.add(() => service.close());
      const client = await connectClient({ urls, tls: { ca: cert }, namespace: ns.namespace, defaultTimeoutMs: 5000 });
      td.add(() => client.close());
      await expect(client.call('add', [40, 2])).resolves.toBe(42);
      // Two connections, each a TLS session that asked for "localhost" by SNI.
      expect(amqps.handshakes.slice(before)).toEqual([{ servername: 'localhost' }, { servername: 'localhost' }]);
    });

    it('refuses a certificate it cannot verify (rejectUnauthorized is on by default)', async () => {
      const before = amqps.failures.length;
      const c = new AmqpConnection({ urls: `amqps://${credentials}@localhost:${amqps.port}`, startTimeoutMs: 500, reconnect: { initialDelayMs: 50, maxDelayMs: 100 } });
      td.add(() => c.close());
      await expect(c.start()).rejects.toThrow(/self[- ]signed|certificate/i);
      await c.close();
      expect(amqps.failures.length).toBeGreaterThan(before);
    });

    it('passes the other `tls` options through: rejectUnauthorized, servername', async () => {
      const loose = new AmqpConnection({ urls: `amqps://${credentials}@127.0.0.1:${amqps.port}`, tls: { rejectUnauthorized: false, servername: 'broker.internal' } });
      td.add(() => loose.close());
      await loose.start();
      expect(loose.state).toMatchObject({ type: 'open', url: `amqps://${user.username}:***@127.0.0.1:${amqps.port}` });
      await loose.close();
      expect(amqps.handshakes.at(-1)).toEqual({ servername: 'broker.internal' });
    });

    it('presents a client certificate from `tls.cert`/`tls.key` to a server that requires one', async () => {
      const mutual = await tlsProxy(amqpUrl(), { requestCert: true, ca: clientCert });
      const urls = `amqps://${credentials}@localhost:${mutual.port}`;
      const withCert = new AmqpConnection({ urls, tls: { ca: cert, cert: clientCert, key: clientKey } });
      td.add(() => withCert.close());
      await withCert.start();
      await withCert.close();
      const without = new AmqpConnection({ urls, tls: { ca: cert }, startTimeoutMs: 500, reconnect: { initialDelayMs: 50, maxDelayMs: 100 } });
      td.add(() => without.close());
      await expect(without.start()).rejects.toThrow();
      await without.close();
      expect(mutual.handshakes).toHaveLength(1);
    });
  });

  describe('rediss://', () => {
    it('speaks TLS for a rediss:// URL (a self-signed server is refused without its CA)', async () => {
      const before = rediss.failures.length;
      const view = new InflightView({ redis: `rediss://localhost:${rediss.port}`, commandTimeoutMs: 500 });
      td.add(() => view.close());
      await expect(view.list()).rejects.toThrow();
      await view.close();
      expect(rediss.failures.length).toBeGreaterThan(before);
    });

    it('works end to end with `tls` options in the Redis config', async () => {
      const before = rediss.handshakes.length;
      const view = new InflightView({ redis: { host: 'localhost', port: rediss.port, tls: { ca: cert } }, keyPrefix: ns.namespace });
      td.add(() => view.close());
      await expect(view.list()).resolves.toEqual([]);
      await view.close();
      expect(rediss.handshakes.length).toBeGreaterThan(before);
    });
  });

  it('needs no code: the broker process takes amqps:// and rediss:// URLs from its environment, and a private CA from NODE_EXTRA_CA_CERTS', async () => {
    const amqpBefore = amqps.handshakes.length;
    const redisBefore = rediss.handshakes.length;
    const child = spawnTs(path.join(__dirname, '..', '..', 'broker', 'src', 'main.ts'), [], {
      AMQP_URL: `amqps://${credentials}@localhost:${amqps.port}`,
      REDIS_URL: `rediss://localhost:${rediss.port}`,
      NODE_EXTRA_CA_CERTS: certFile,
      WARREN_NAMESPACE: ns.namespace,
      GATEWAY_PORT: '0',
      GATEWAY_AUTH: 'none',
      LOG_LEVEL: 'info',
    });
    td.add(() => child.kill('SIGKILL'));
    ns.service('warren-broker');
    const ready = JSON.parse(await child.waitForLine(/"msg":"broker ready"/, 30_000)) as { url: string };
    const readyz = (await (await fetch(`${ready.url}/readyz`)).json()) as unknown;
    expect(readyz).toMatchObject({ status: 'ready', rabbitmq: { ok: true }, dependencies: [{ name: 'redis', ok: true, state: 'ready' }, { name: 'discovery', ok: true }] });
    expect(await (await fetch(`${ready.url}/inflight`)).json()).toMatchObject({ configured: true, calls: [] });
    expect(await child.kill('SIGTERM')).toMatchObject({ code: 0 });
    expect(amqps.handshakes.length).toBeGreaterThan(amqpBefore);
    // The readiness probe and the in-flight view each opened a TLS session to Redis.
    expect(rediss.handshakes.length - redisBefore).toBeGreaterThanOrEqual(2);
  }, 60_000);
});
