// `warren call` marks its call queued (issue 27: calls waiting in RabbitMQ from AMQP callers are
// rows in In flight, not only the gateway's): while the one worker is busy, the CLI's call is
// listed by the in-flight view as queued, then runs once the worker is free, and leaves no mark.
import { connectClient, startService } from '@warren/amqp';
import { InflightView, createRedisTracker } from '@warren/inflight';
import { Teardown, amqpUrl, redisUrl, waitFor } from '@warren/testkit';
import { TestNamespace } from '../../../test/support/amqp';
import { deleteRedisKeys, runCli } from '../../../test/integration/helpers';

const td = new Teardown();
const ns = new TestNamespace();
afterAll(() => td.run());

test('a call `warren call` sent is listed as queued while it waits for the busy worker, then runs', async () => {
  td.add(() => ns.destroy());
  td.add(() => deleteRedisKeys(`${ns.namespace}:`));
  const release = new AbortController();
  const held = (_p: unknown, ctx: { signal: AbortSignal }): Promise<string> => new Promise((resolve) => {
    if (release.signal.aborted) resolve('released');
    release.signal.addEventListener('abort', () => resolve('released'), { once: true });
    ctx.signal.addEventListener('abort', () => resolve('aborted'), { once: true });
  });
  const tracker = createRedisTracker({ redis: redisUrl(), keyPrefix: ns.namespace, heartbeatMs: 200 });
  const service = await startService({ urls: amqpUrl(), namespace: ns.namespace, name: ns.service('parker'), instanceId: 'parker-1', prefetch: 1, tracker, methods: { hold: { handler: held } } });
  td.add(() => service.close());
  const view = new InflightView({ redis: redisUrl(), keyPrefix: ns.namespace });
  td.add(() => view.close());
  const client = await connectClient({ urls: amqpUrl(), namespace: ns.namespace, defaultTimeoutMs: 30_000 });
  td.add(() => client.close());
  td.add(() => release.abort());

  const first = client.call('hold');
  await waitFor(async () => (await view.list()).some((c) => c.method === 'hold' && c.state === 'running'), { message: 'the worker busy' });
  const cli = runCli(['--json', 'call', 'hold', '--timeout', '30000'], { env: { AMQP_URL: amqpUrl(), REDIS_URL: redisUrl(), WARREN_NAMESPACE: ns.namespace, WARREN_GATEWAY: 'off' }, timeoutMs: 40_000 });
  await waitFor(async () => (await view.list()).some((c) => c.state === 'queued'), { timeoutMs: 20_000, message: 'the CLI call listed as queued' });
  const queued = (await view.list()).find((c) => c.state === 'queued');
  expect(queued).toMatchObject({ method: 'hold', worker: '', attempt: 0 });
  expect(await view.status(queued?.callId ?? '')).toMatchObject({ state: 'queued' });

  release.abort();
  await expect(first).resolves.toBe('released');
  const run = await cli;
  expect(run.code).toBe(0);
  expect(JSON.parse(run.stdout)).toMatchObject({ result: 'released' });
  // Taken by the worker (the claim dropped it from the queued list), then done.
  expect(await view.status(queued?.callId ?? '')).toMatchObject({ state: 'done', attempt: 1 });
  expect((await view.list()).some((c) => c.callId === queued?.callId)).toBe(false);
}, 60_000);

test('a call `warren call` sent that a worker without a tracker answers leaves no queued mark behind once the command exits', async () => {
  const view = new InflightView({ redis: redisUrl(), keyPrefix: ns.namespace });
  td.add(() => view.close());
  const plain = await startService({ urls: amqpUrl(), namespace: ns.namespace, name: ns.service('plain'), methods: { echo: { handler: (p: unknown) => p } } });
  td.add(() => plain.close());
  const run = await runCli(['--json', 'call', 'echo', '"hi"'], { env: { AMQP_URL: amqpUrl(), REDIS_URL: redisUrl(), WARREN_NAMESPACE: ns.namespace, WARREN_GATEWAY: 'off' }, timeoutMs: 30_000 });
  expect(JSON.parse(run.stdout)).toMatchObject({ result: ['hi'] });
  // The command drops its mark before it closes Redis: nothing reads `queued` until the deadline.
  expect((await view.list()).filter((c) => c.state === 'queued')).toEqual([]);
}, 60_000);
