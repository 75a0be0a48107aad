import { createServer, type Server } from 'node:net';
import { ServicesUnavailableError, ensureServices, probeTcp, type Dependency, type EnsureDeps } from '../../scripts/ensure-services';

function deps(over: Partial<EnsureDeps> & { answering?: number[] } = {}): EnsureDeps & { started: Dependency[][] } {
  const started: Dependency[][] = [];
  return {
    env: {},
    probe: async (_host, port) => (over.answering ?? []).includes(port),
    startContainers: async (missing) => {
      started.push([...missing]);
      return Object.fromEntries(missing.map((d) => [d, d === 'rabbitmq' ? 'amqp://guest:guest@10.0.0.1:32768' : 'redis://10.0.0.1:32769']));
    },
    started,
    ...over,
  };
}

describe('ensureServices', () => {
  it('starts no container with WARREN_DOCKER=off', async () => {
    const d = deps({ env: { WARREN_DOCKER: 'off' } });
    await expect(ensureServices(d)).rejects.toBeInstanceOf(ServicesUnavailableError);
    expect(d.started).toEqual([]);
  });

  it('probes the defaults WARREN_DEFAULT_AMQP_URL / WARREN_DEFAULT_REDIS_URL move (how a test plays a bare machine)', async () => {
    const probed: number[] = [];
    const d = deps({ env: { WARREN_DEFAULT_AMQP_URL: 'amqp://127.0.0.1:1', WARREN_DEFAULT_REDIS_URL: 'redis://127.0.0.1:2' }, probe: async (_h, port) => (probed.push(port), false), startContainers: () => Promise.reject(new Error('no Docker')) });
    const err = await ensureServices(d).catch((e: unknown) => e);
    expect(probed.sort()).toEqual([1, 2]);
    expect(err).toBeInstanceOf(ServicesUnavailableError);
    expect((err as Error).message).toContain('127.0.0.1:1');
  });

  it('uses AMQP_URL and REDIS_URL as given, probing nothing', async () => {
    const d = deps({ env: { AMQP_URL: 'amqp://x', REDIS_URL: 'redis://y' }, probe: async () => { throw new Error('must not probe'); } });
    await expect(ensureServices(d)).resolves.toEqual({ rabbitmq: 'env', redis: 'env' });
    expect(d.started).toEqual([]);
  });

  it('uses what answers on the default ports', async () => {
    const d = deps({ answering: [5672, 6379] });
    await expect(ensureServices(d)).resolves.toEqual({ rabbitmq: 'local', redis: 'local' });
    expect(d.env).toEqual({});
    expect(d.started).toEqual([]);
  });

  it('starts only what is missing in containers and exports its URL', async () => {
    const d = deps({ answering: [5672] });
    await expect(ensureServices(d)).resolves.toEqual({ rabbitmq: 'local', redis: 'container' });
    expect(d.started).toEqual([['redis']]);
    expect(d.env).toEqual({ REDIS_URL: 'redis://10.0.0.1:32769' });
  });

  it('fails with one message saying how to provide them when no Docker engine is reachable', async () => {
    const d = deps({ startContainers: async () => { throw new Error('Could not find a working container runtime strategy'); } });
    const err = await ensureServices(d).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ServicesUnavailableError);
    expect(err).toMatchObject({ code: 'TEST_SERVICES_UNAVAILABLE' });
    const message = (err as Error).message;
    for (const hint of ['AMQP_URL', 'REDIS_URL', 'docker compose up -d rabbitmq redis', 'testcontainers']) expect(message).toContain(hint);
    expect(message).not.toContain('guest:guest');
  });
});

describe('probeTcp', () => {
  let server: Server;
  let port: number;
  beforeAll(async () => {
    server = createServer((s) => s.destroy());
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  // Whether a port is open, answered by the connection itself (a refused port fails at once), not by
  // the timeout: no timed assertion here (speed is a benchmark's business), the verdicts are what count.
  it('answers whether a port is open', async () => {
    await expect(probeTcp('127.0.0.1', port, 500)).resolves.toBe(true);
    await expect(probeTcp('127.0.0.1', 1, 500)).resolves.toBe(false);
  });
});
