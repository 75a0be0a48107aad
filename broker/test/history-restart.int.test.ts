// The outcome history outlives a burst and a broker restart: a tracked service's workers write it to
// Redis as they finish calls, so a new broker process on the same Redis answers history.list with
// the calls finished before it started; failures outlive a burst of successes past the success bound.
import path from 'node:path';
import { connectClient, startService } from '@warren/amqp';
import { createRedisTracker } from '@warren/inflight';
import { JsonRpcError } from '@warren/jsonrpc';
import { Teardown, amqpUrl, redisUrl, spawnTs } from '@warren/testkit';
import { deleteRedisKeys } from '../../test/integration/helpers';
import { TestNamespace } from '../../test/support/amqp';

const td = new Teardown();
const ns = new TestNamespace();
afterAll(() => td.run());

interface Page { items: { callId: string; state: string; method: string; code?: number; error?: { message: string } }[]; next?: string }

async function startBrokerProcess(): Promise<{ url: string; stop: () => Promise<void> }> {
  const child = spawnTs(path.join(__dirname, '..', 'src', 'main.ts'), [], {
    AMQP_URL: amqpUrl(), REDIS_URL: redisUrl(), WARREN_NAMESPACE: ns.namespace, GATEWAY_PORT: '0', GATEWAY_AUTH: 'none', LOG_LEVEL: 'info',
  });
  td.add(() => child.kill('SIGKILL'));
  const ready = JSON.parse(await child.waitForLine(/"msg":"broker ready"/, 30_000)) as { url: string };
  return {
    url: ready.url,
    stop: async () => {
      expect((await child.kill('SIGTERM')).code).toBe(0);
    },
  };
}

async function history(url: string, params: Record<string, unknown>): Promise<Page> {
  const res = await fetch(`${url}/rpc`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', method: 'history.list', params, id: 1 }) });
  const body = (await res.json()) as { result?: Page; error?: unknown };
  if (!body.result) throw new Error(`history.list: ${JSON.stringify(body.error)}`);
  return body.result;
}

it('answers history.list from a new broker process with the calls finished before it, failures kept past a burst of successes', async () => {
  td.add(() => ns.destroy());
  td.add(() => deleteRedisKeys(`${ns.namespace}:`));
  ns.service('warren-broker');
  const name = ns.service('history');
  // A small success bound, so a burst of a few hundred successes goes past it.
  const tracker = createRedisTracker({ redis: redisUrl(), keyPrefix: ns.namespace, history: { done: { entries: 100, ageMs: 3_600_000 }, failed: { entries: 1000, ageMs: 3_600_000 } } });
  const service = await startService({
    urls: amqpUrl(), namespace: ns.namespace, name, tracker,
    methods: {
      ok: { handler: () => 'fine' },
      boom: { handler: () => { throw new JsonRpcError(-32050, 'it broke', { part: 'gear' }); } },
    },
  });
  td.add(() => service.close());
  const client = await connectClient({ urls: amqpUrl(), namespace: ns.namespace });
  td.add(() => client.close());

  const first = await startBrokerProcess();
  const failures: string[] = [];
  for (let i = 0; i < 3; i++) {
    const callId = client.nextCallId();
    await expect(client.call('boom', [], { id: callId })).rejects.toMatchObject({ code: -32050 });
    failures.push(callId);
  }
  for (let round = 0; round < 6; round++) await Promise.all(Array.from({ length: 100 }, () => client.call('ok', [])));
  const before = await history(first.url, { method: 'boom' });
  expect(before.items.map((c) => c.callId)).toEqual([...failures].reverse());
  await first.stop();

  const second = await startBrokerProcess();
  const failed = await history(second.url, { state: 'failures' });
  expect(failed.items.map((c) => c.callId)).toEqual([...failures].reverse());
  expect(failed.items[0]).toMatchObject({ state: 'failed', method: 'boom', code: -32050, error: { message: 'it broke' } });
  const done = await history(second.url, { state: 'done', limit: 500 });
  // MAXLEN ~ trims whole stream nodes (100 entries): about the bound, never the whole burst of 600.
  expect(done.items.length).toBeGreaterThanOrEqual(100);
  expect(done.items.length).toBeLessThan(400);
  expect(done.items.every((c) => c.method === 'ok' && c.state === 'done')).toBe(true);
  // Filtered by code, and paged.
  expect((await history(second.url, { code: -32050, limit: 2 })).next).toBeDefined();
  await second.stop();
}, 90_000);
