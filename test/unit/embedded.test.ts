// The whole system without RabbitMQ or Redis, in this test's process (scripts/embedded.ts): the
// unit tier's way to test across the broker and the services. The same services as `npm start`,
// over the in-memory broker and stores.
import { connectClient, type RpcClient } from '@warren/amqp';
import { ErrorCode } from '@warren/jsonrpc';
import { silentLogger } from '@warren/logger';
import { Teardown, waitFor } from '@warren/testkit';
import { PassThrough } from 'node:stream';
import { run } from '../../libs/cli/src';
import { startEmbedded, type EmbeddedSystem } from '../../scripts/embedded';

const td = new Teardown();
let system: EmbeddedSystem;
let client: RpcClient;

beforeAll(async () => {
  system = await startEmbedded({ GATEWAY_AUTH: 'none', GATEWAY_PORT: '0', JOBS_STEP_MS: '200' }, () => silentLogger(), { broker: { defaultMetrics: false } });
  td.add(() => system.close());
  client = await connectClient({ connection: system.bus.connect(), defaultTimeoutMs: 10_000 });
  td.add(() => client.close());
}, 30_000);
afterAll(() => td.run());

const rpc = async (body: unknown): Promise<unknown> => {
  const res = await fetch(`${system.url}/rpc`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return res.json();
};

it('answers over HTTP and says it is embedded in /readyz and /services', async () => {
  await expect(rpc({ jsonrpc: '2.0', method: 'add', params: [4, 5], id: 1 })).resolves.toEqual({ jsonrpc: '2.0', result: 9, id: 1 });
  await expect((await fetch(`${system.url}/readyz`)).json()).resolves.toMatchObject({ status: 'ready', mode: 'embedded' });
  const services = (await (await fetch(`${system.url}/services`)).json()) as { mode: string; services: { name: string; durable: boolean }[] };
  expect(services.mode).toBe('embedded');
  expect(services.services.find((s) => s.name === 'jobs')?.durable).toBe(false);
});

it('tracks a job in the shared in-memory store: the broker lists it, a cancel stops it, its outcome is kept', async () => {
  const callId = client.nextCallId();
  const answer = client.call('report.render', { size: 50 }, { id: callId });
  answer.catch(() => undefined);
  await waitFor(async () => ((await rpc({ jsonrpc: '2.0', method: 'inflight.list', params: {}, id: 2 })) as { result: { callId: string }[] }).result.some((c) => c.callId === callId), { timeoutMs: 5000, intervalMs: 50, message: 'job listed' });
  await expect(rpc({ jsonrpc: '2.0', method: 'inflight.cancel', params: { callId }, id: 3 })).resolves.toMatchObject({ result: { outcome: 'signalled' } });
  await expect(answer).rejects.toMatchObject({ code: ErrorCode.Cancelled });
  await expect(rpc({ jsonrpc: '2.0', method: 'inflight.status', params: { callId }, id: 4 })).resolves.toMatchObject({ result: { state: 'cancelled' } });
});

it('delays a call in memory (not durable): due, listed by delayed.list, unlisted by delayed.cancel', async () => {
  const post = async (body: unknown, headers: Record<string, string>, signal?: AbortSignal): Promise<unknown> => (await fetch(`${system.url}/rpc`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body), ...(signal ? { signal } : {}) })).json();
  const sent = Date.now();
  await expect(post({ jsonrpc: '2.0', method: 'add', params: [2, 3], id: 5 }, { 'x-delay-ms': '300' })).resolves.toEqual({ jsonrpc: '2.0', result: 5, id: 5 });
  expect(Date.now() - sent).toBeGreaterThanOrEqual(300);
  const hangUp = new AbortController();
  const later = post({ jsonrpc: '2.0', method: 'add', params: [1, 1], id: 6 }, { 'x-delay-ms': '60000', 'x-timeout-ms': '1000' }, hangUp.signal);
  type Listed = { result: { calls: { callId: string; method: string; service: string }[] } };
  await waitFor(async () => ((await rpc({ jsonrpc: '2.0', method: 'delayed.list', params: {}, id: 7 })) as Listed).result.calls.length === 1, { timeoutMs: 5000, intervalMs: 50, message: 'listed' });
  const [entry] = ((await rpc({ jsonrpc: '2.0', method: 'delayed.list', params: {}, id: 8 })) as Listed).result.calls;
  expect(entry).toMatchObject({ method: 'add', service: 'calculator' });
  await expect(rpc({ jsonrpc: '2.0', method: 'delayed.cancel', params: { callId: entry?.callId }, id: 9 })).resolves.toMatchObject({ result: { listed: true } });
  await expect(rpc({ jsonrpc: '2.0', method: 'delayed.list', params: {}, id: 10 })).resolves.toMatchObject({ result: { calls: [] } });
  // Its HTTP caller would be answered -32003 when it falls due; this one hangs up instead of waiting a minute.
  hangUp.abort();
  await expect(later).rejects.toThrow();
});

it('fans a notification out to the audit service, which keeps it in memory', async () => {
  await client.notify('notify_hello', [7]);
  await waitFor(async () => (await client.call<{ method: string }[]>('audit.recent', { limit: 10 })).some((e) => e.method === 'notify_hello'), { timeoutMs: 5000, intervalMs: 50, message: 'recorded' });
});

it('the warren CLI finds it embedded on its own and goes through the gateway: `warren call add 4 5` prints 9', async () => {
  let out = '';
  let err = '';
  const io = { stdout: { write: (t: string) => (out += t) }, stderr: { write: (t: string) => (err += t) }, stdin: new PassThrough(), env: { WARREN_GATEWAY: system.url } };
  await expect(run(['call', 'add', '4', '5'], io)).resolves.toBe(0);
  expect({ out, err }).toEqual({ out: '9\n', err: '' });
  out = '';
  await expect(run(['--json', 'inflight'], io)).resolves.toBe(0);
  expect(JSON.parse(out)).toMatchObject({ calls: [] });
});
