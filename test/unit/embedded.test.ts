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
