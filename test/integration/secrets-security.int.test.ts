// Secrets never appear in logs. A RabbitMQ user of the test's own with a
// random password, bearer tokens, a Redis URL with a password and params
// that look secret go through a broker and a service logging at debug into
// memory, and through the broker's main.ts as a child process configured by
// its environment with LOG_LEVEL=debug; connection failures, a lost
// connection and refused credentials are provoked on the way. No line, of
// either, contains any of the secrets.
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { startService } from '@warren/amqp';
import { AmqpConnection } from '@warren/amqp-transport';
import { redactUrl } from '@warren/logger';
import { Teardown, amqpUrl, once, spawnTs, waitFor } from '@warren/testkit';
import { redisPingProbe, startBroker } from '../../broker/src';
import { TestNamespace } from '../support/amqp';
import { memoryLogger } from '../support/hostile';
import { rabbitmqctl } from './faults/rabbitmqctl';

const td = new Teardown();
const ns = new TestNamespace();
const hex = (): string => randomBytes(8).toString('hex');
const user = `warren_t_${hex()}`;
const password = `Pw-${hex()}`;
const secrets = {
  password,
  /** A password URL parsers misread (an unescaped "/"): it must not leak through the host or path either. */
  misread: `${hex().slice(0, 6)}/Sl-${hex()}`,
  wrongPassword: `Wrong-${hex()}`,
  token: `tok-${hex()}`,
  guessedToken: `guess-${hex()}`,
  redis: `rd-${hex()}`,
  param: `param-${hex()}`,
};
const broker = amqpUrl();
const hostPort = new URL(broker).host;
const goodUrl = `amqp://${user}:${password}@${hostPort}`;

beforeAll(async () => {
  await rabbitmqctl(['add_user', user, password], 20_000);
  td.add(() => rabbitmqctl(['delete_user', user], 20_000));
  await rabbitmqctl(['set_permissions', '-p', '/', user, '.*', '.*', '.*'], 20_000);
  td.add(() => ns.destroy());
}, 60_000);
afterAll(() => td.run(), 60_000);

function expectNoSecrets(lines: readonly string[], where: string): void {
  const text = lines.join('\n');
  for (const [name, secret] of Object.entries(secrets)) {
    expect({ where, name, leaked: text.includes(secret) }).toEqual({ where, name, leaked: false });
  }
  // The misread password's tail too: a redactor that stops at its "/" would show it.
  expect(text.includes(secrets.misread.split('/')[1] as string)).toBe(false);
}

it('a broker and a service at debug level log no password, token, Redis password or params', async () => {
  const log = memoryLogger('debug');
  // The first URL refuses connections, so every start goes through a failed attempt first.
  const urls = [`amqp://${user}:${password}@127.0.0.1:1`, goodUrl];
  const b = await startBroker({
    urls,
    reconnect: { initialDelayMs: 50, maxDelayMs: 200 },
    namespace: ns.namespace,
    serviceName: ns.service('warren-broker'),
    port: 0,
    defaultMetrics: false,
    tokens: [secrets.token],
    logger: log.logger,
    probes: [redisPingProbe(`redis://:${secrets.redis}@127.0.0.1:6379`)],
  });
  td.add(() => b.close());
  const url = await b.listen();
  const s = await startService({ urls, namespace: ns.namespace, name: ns.service('secrets'), logger: log.logger, methods: { echo: { handler: () => 'ok' } } });
  td.add(() => s.close());
  await waitFor(() => b.gateway.catalogue.current().methods.has('echo'));

  const rpc = (body: string, token: string): Promise<Response> => fetch(`${url}/rpc`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body });
  const withSecret = JSON.stringify({ jsonrpc: '2.0', method: 'echo', params: { password: secrets.param, note: secrets.param }, id: 1 });
  expect(await (await rpc(withSecret, secrets.token)).json()).toEqual({ jsonrpc: '2.0', result: 'ok', id: 1 });
  expect((await rpc(withSecret, secrets.guessedToken)).status).toBe(401);
  // A failed call is logged at warn with its method and code; its params never.
  expect((await (await rpc(JSON.stringify({ jsonrpc: '2.0', method: 'nobody', params: [secrets.param], id: 2 }), secrets.token)).json())).toMatchObject({ error: { code: -32601 } });
  const readyz = await (await fetch(`${url}/readyz`)).text();
  expect(readyz).not.toContain(secrets.redis);
  expect(JSON.parse(readyz)).toMatchObject({ dependencies: [{ name: 'redis', ok: false }, { name: 'discovery' }] });

  // A lost connection and its recovery.
  // The broker opened this connection itself (from `urls`): an AmqpConnection.
  const own = b.connection as AmqpConnection;
  await own.simulateLoss();
  await once(own, 'open', 10_000);
  expect(await (await rpc(withSecret, secrets.token)).json()).toEqual({ jsonrpc: '2.0', result: 'ok', id: 1 });

  // Refused credentials, and a URL whose password the parsers misread.
  for (const bad of [`amqp://${user}:${secrets.wrongPassword}@${hostPort}`, `amqp://${user}:${secrets.misread}@${hostPort}`]) {
    const c = new AmqpConnection({ urls: bad, logger: log.logger, startTimeoutMs: 1000, reconnect: { initialDelayMs: 50, maxDelayMs: 100 } });
    td.add(() => c.close());
    await expect(c.start()).rejects.toThrow();
    await c.close();
  }

  expect(log.lines.length).toBeGreaterThan(20);
  // The lines this test provoked are there, just without the secrets.
  const messages = log.entries().map((e) => e['msg']);
  for (const msg of ['amqp connect attempt failed', 'amqp connection lost', 'call failed']) expect(messages).toContain(msg);
  expectNoSecrets(log.lines, 'in-process logs');
  expect(log.lines.join('\n')).toContain(redactUrl(`amqp://${user}:${password}@127.0.0.1:1`));
}, 60_000);

it('main.ts configured by its environment with LOG_LEVEL=debug prints no secret', async () => {
  const child = spawnTs(path.join(__dirname, '..', '..', 'broker', 'src', 'main.ts'), [], {
    AMQP_URL: `amqp://${user}:${password}@127.0.0.1:1,${goodUrl}`,
    REDIS_URL: `redis://:${secrets.redis}@127.0.0.1:6379`,
    GATEWAY_TOKENS: `other-token,${secrets.token}`,
    WARREN_NAMESPACE: ns.namespace,
    GATEWAY_PORT: '0',
    LOG_LEVEL: 'debug',
  });
  td.add(() => child.kill('SIGKILL'));
  const ready = JSON.parse(await child.waitForLine(/"msg":"broker ready"/, 30_000)) as { url: string; amqp: string[] };
  expect(ready.amqp).toEqual([`amqp://${user}:***@127.0.0.1:1`, `amqp://${user}:***@${hostPort}`]);
  const rpc = (token: string): Promise<Response> => fetch(`${ready.url}/rpc`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ jsonrpc: '2.0', method: 'nobody', params: { password: secrets.param }, id: 1 }),
  });
  expect((await rpc(secrets.token)).status).toBe(200);
  expect((await rpc(secrets.guessedToken)).status).toBe(401);
  await fetch(`${ready.url}/readyz`);
  await fetch(`${ready.url}/inflight`, { headers: { authorization: `Bearer ${secrets.token}` } });
  expect(await child.kill('SIGTERM')).toMatchObject({ code: 0 });
  expect(child.stdout.length).toBeGreaterThan(5);
  expectNoSecrets([...child.stdout, ...child.stderr], 'main.ts output');
}, 60_000);
