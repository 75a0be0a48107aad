// The ops port (/healthz, /readyz): the server alone, then a service main over
// the in-memory broker: not ready while starting, ready once consuming, not
// ready while its connection is down, closed (refusing) after shutdown.
import { EventEmitter } from 'node:events';
import { runServiceMain, startService, type WarrenService } from '@warren/amqp';
import { MemoryBroker } from '@warren/amqp-transport';
import { opsFromEnv } from '../src/runtime/service-env';
import { startOpsServer } from '../src/runtime/ops-server';
import type { MainProcess } from '../src/runtime/service-main';
import { silentLogger } from '@warren/logger';
import { Teardown, freePort, waitFor } from '@warren/testkit';

const td = new Teardown();
afterEach(() => td.run());

async function get(url: string, method = 'GET'): Promise<{ status: number; body: string }> {
  const response = await fetch(url, { method });
  return { status: response.status, body: await response.text() };
}

function fakeProcess(): MainProcess & { emitter: EventEmitter } {
  const emitter = new EventEmitter();
  return { emitter, on: (s, l) => emitter.on(s, l), off: (s, l) => emitter.off(s, l), stderr: { write: () => true } };
}

describe('startOpsServer', () => {
  it('answers /healthz always, /readyz as ready() says, 404 elsewhere, 405 to other methods; close is idempotent and final', async () => {
    let ready = false;
    const ops = await startOpsServer({ port: 0, name: 'calc', ready: () => ready });
    td.add(() => ops.close());
    expect(ops.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(await get(`${ops.url}/healthz`)).toMatchObject({ status: 200 });
    expect(JSON.parse((await get(`${ops.url}/healthz`)).body)).toMatchObject({ status: 'ok', name: 'calc' });
    expect(await get(`${ops.url}/readyz`)).toEqual({ status: 503, body: JSON.stringify({ status: 'not ready', name: 'calc' }) });
    ready = true;
    expect(await get(`${ops.url}/readyz`)).toEqual({ status: 200, body: JSON.stringify({ status: 'ready', name: 'calc' }) });
    expect(await get(`${ops.url}/readyz`, 'HEAD')).toEqual({ status: 200, body: '' });
    expect((await get(`${ops.url}/metrics`)).status).toBe(404);
    expect((await get(`${ops.url}/readyz`, 'POST')).status).toBe(405);
    await Promise.all([ops.close(), ops.close()]);
    await expect(fetch(`${ops.url}/healthz`)).rejects.toThrow();
  });

  it('serves more routes (issue 31\'s /metrics goes here) and a failing route answers 500', async () => {
    const ops = await startOpsServer({
      port: 0, name: 'calc', ready: () => true,
      routes: { '/metrics': () => ({ status: 200, body: 'up 1\n', contentType: 'text/plain' }), '/broken': () => Promise.reject(new Error('x')) },
    });
    td.add(() => ops.close());
    const metrics = await fetch(`${ops.url}/metrics`);
    expect(metrics.headers.get('content-type')).toBe('text/plain');
    expect(await metrics.text()).toBe('up 1\n');
    expect((await get(`${ops.url}/broken`)).status).toBe(500);
  });

  it('rejects when the port is taken (runServiceMain then runs on without it)', async () => {
    const first = await startOpsServer({ port: 0, name: 'a', ready: () => true });
    td.add(() => first.close());
    await expect(startOpsServer({ port: Number(new URL(first.url).port), name: 'b', ready: () => true })).rejects.toThrow(/EADDRINUSE/);
  });
});

describe('opsFromEnv', () => {
  it('is off unless WARREN_OPS_PORT is set, on loopback unless WARREN_OPS_HOST says otherwise, and names a bad port', () => {
    expect(opsFromEnv({})).toBeUndefined();
    expect(opsFromEnv({ WARREN_OPS_PORT: '' })).toBeUndefined();
    expect(opsFromEnv({ WARREN_OPS_PORT: '9464' })).toEqual({ port: 9464, host: '127.0.0.1' });
    expect(opsFromEnv({ WARREN_OPS_PORT: '9464', WARREN_OPS_HOST: '0.0.0.0' })).toEqual({ port: 9464, host: '0.0.0.0' });
    for (const bad of ['0', '65536', 'http', '-1']) expect(() => opsFromEnv({ WARREN_OPS_PORT: bad })).toThrow(/WARREN_OPS_PORT/);
  });
});

describe('runServiceMain with an ops port', () => {
  it('is alive but not ready while starting, ready once consuming, not ready while disconnected, and closed after shutdown', async () => {
    const bus = new MemoryBroker({ reconnectDelayMs: 3000 });
    td.add(() => bus.close());
    const connection = bus.connect();
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    let letStart: () => void = () => undefined;
    const gate = new Promise<void>((r) => (letStart = r));
    let service: WarrenService | undefined;
    const proc = fakeProcess();
    const code = runServiceMain({
      name: 'calc', logger: silentLogger(), process: proc, ops: { port, host: '127.0.0.1' },
      start: async () => {
        await gate;
        const started = await startService({ connection, name: 'calc', logger: silentLogger(), methods: { ping: { handler: () => 'pong' } } });
        service = started;
        return { ready: () => started.ready, close: () => started.close() };
      },
    });
    td.add(() => void proc.emitter.emit('SIGTERM', 'SIGTERM'));
    await waitFor(async () => (await fetch(`${url}/healthz`).then((r) => r.status, () => 0)) === 200);
    expect((await get(`${url}/readyz`)).status).toBe(503);
    letStart();
    await waitFor(async () => (await get(`${url}/readyz`)).status === 200);
    expect(service?.ready).toBe(true);

    await connection.simulateLoss();
    expect(service?.ready).toBe(false);
    // Down for reconnectDelayMs (3 s): long enough for one local request, however loaded the machine.
    expect((await get(`${url}/readyz`)).status).toBe(503);
    await waitFor(async () => (await get(`${url}/readyz`)).status === 200, { timeoutMs: 15_000 });

    proc.emitter.emit('SIGTERM', 'SIGTERM');
    await expect(code).resolves.toBe(0);
    expect(service?.ready).toBe(false);
    await expect(fetch(`${url}/healthz`)).rejects.toThrow();
  });

  // Two stacks on one machine (issue 42): a port another process holds costs this one its probes, not its start.
  it('a service whose ops port is taken logs it and runs on without one', async () => {
    const other = await startOpsServer({ port: 0, name: 'other', ready: () => true });
    td.add(() => other.close());
    const port = Number(new URL(other.url).port);
    const warnings: unknown[] = [];
    const logger = silentLogger();
    jest.spyOn(logger, 'warn').mockImplementation(((obj: unknown, msg?: string) => void warnings.push([obj, msg])) as typeof logger.warn);
    const proc = fakeProcess();
    const close = jest.fn(() => Promise.resolve());
    let started = false;
    const code = runServiceMain({ name: 'calc', logger, process: proc, ops: { port, host: '127.0.0.1' }, start: () => ((started = true), Promise.resolve({ close })) });
    await waitFor(() => started);
    expect(warnings).toEqual([[{ port, host: '127.0.0.1' }, expect.stringMatching(/ops port already taken/)]]);
    // The other process's server still answers its own name: this one never took the port.
    expect(JSON.parse((await get(`${other.url}/healthz`)).body)).toMatchObject({ name: 'other' });
    proc.emitter.emit('SIGTERM', 'SIGTERM');
    await expect(code).resolves.toBe(0);
    expect(close).toHaveBeenCalledTimes(1);
  });

  it('closes the ops port when starting fails', async () => {
    const port = await freePort();
    const proc = fakeProcess();
    const code = await runServiceMain({ name: 'calc', logger: silentLogger(), process: proc, ops: { port, host: '127.0.0.1' }, start: () => Promise.reject(new Error('no broker')) });
    expect(code).toBe(1);
    await expect(fetch(`http://127.0.0.1:${port}/healthz`)).rejects.toThrow();
  });
});
