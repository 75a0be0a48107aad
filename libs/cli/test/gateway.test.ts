// The CLI through the gateway's POST /rpc (--via gateway, or auto against an embedded system), over
// a stand-in gateway: what it sends (body, X-Timeout-Ms, bearer token), how answers and refusals
// come out, and when auto picks the gateway. test/integration/embedded.int.test.ts runs it against
// the real embedded system.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import { resolveSettings, run, type Io } from '../src/index';
import { Session } from '../src/session';

function fakeIo(env: Record<string, string>): Io & { output: () => string; errors: () => string } {
  let out = '';
  let err = '';
  return { stdout: { write: (t: string) => (out += t) }, stderr: { write: (t: string) => (err += t) }, stdin: new PassThrough(), env, output: () => out, errors: () => err };
}

interface Seen { readonly path: string; readonly headers: IncomingMessage['headers']; readonly body: unknown }
let server: Server;
let base: string;
let seen: Seen[];
let mode: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    let text = '';
    req.on('data', (c: Buffer) => (text += c.toString()));
    req.on('end', () => {
      const body: unknown = text === '' ? undefined : JSON.parse(text);
      seen.push({ path: req.url ?? '', headers: req.headers, body });
      res.setHeader('content-type', 'application/json');
      if (req.url === '/readyz') return res.end(JSON.stringify({ status: 'ready', mode }));
      if (req.url === '/jobs') {
        const j = body as { method: string; id?: string };
        if (j.method === 'nope') return res.writeHead(404).end(JSON.stringify({ error: { code: -32601, message: 'Method not found' } }));
        return res.writeHead(202).end(JSON.stringify(j.id === 'taken' ? { id: 'taken', duplicate: true, deadline: 2, state: 'running' } : { id: j.id ?? 'gw.1', duplicate: false, deadline: 1 }));
      }
      const m = body as { method: string; params?: unknown; id?: unknown };
      if (m.id === undefined) return res.writeHead(204).end();
      if (m.method === 'add') return res.end(JSON.stringify({ jsonrpc: '2.0', result: (m.params as number[]).reduce((a, b) => a + b, 0), id: m.id }));
      if (m.method === 'inflight.status') return res.end(JSON.stringify({ jsonrpc: '2.0', result: { callId: (m.params as { callId: string }).callId, state: 'done', cancelRequested: false }, id: m.id }));
      if (m.method === 'busy') return res.writeHead(429).end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32004, message: 'Overloaded' }, id: null }));
      return res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32601, message: 'Method not found' }, id: m.id }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));
beforeEach(() => {
  seen = [];
  mode = 'embedded';
});

// A closed port for RabbitMQ: any attempt to use it would fail the command.
const closedAmqp = 'amqp://guest:guest@127.0.0.1:1';

it('auto: with no AMQP URL given and an embedded gateway, `warren call add 4 5` goes through POST /rpc and prints 9', async () => {
  const io = fakeIo({ WARREN_GATEWAY: base, WARREN_TOKEN: 'tok' });
  await expect(run(['call', 'add', '4', '5', '--timeout', '1234'], io)).resolves.toBe(0);
  expect(io.output()).toBe('9\n');
  const rpc = seen.find((s) => s.path === '/rpc');
  expect(rpc?.body).toEqual({ jsonrpc: '2.0', method: 'add', params: [4, 5], id: 1 });
  expect(rpc?.headers).toMatchObject({ 'x-timeout-ms': '1234', authorization: 'Bearer tok' });
});

it('auto: an AMQP URL given, or a gateway that is not embedded, means RabbitMQ (here closed: exit 3)', async () => {
  const named = fakeIo({ WARREN_GATEWAY: base, AMQP_URL: closedAmqp });
  await expect(run(['--connect-timeout', '300', 'call', 'add', '1', '2'], named)).resolves.toBe(3);
  expect(seen).toEqual([]);
  await expect(run(['--amqp-url', closedAmqp, '--connect-timeout', '300', 'call', 'add', '1', '2'], fakeIo({ WARREN_GATEWAY: base }))).resolves.toBe(3);
  expect(seen).toEqual([]);
  mode = 'rabbitmq';
  const io = fakeIo({ WARREN_GATEWAY: base });
  await expect(new Session(io, resolveSettings(io, {})).via()).resolves.toBe('amqp');
  expect(seen.map((s) => s.path)).toEqual(['/readyz']);
  mode = 'embedded';
  await expect(new Session(io, resolveSettings(io, {})).via()).resolves.toBe('gateway');
});

it('--via gateway: errors are the JSON-RPC errors the gateway answered, refusals included', async () => {
  const io = fakeIo({ WARREN_GATEWAY: base, AMQP_URL: closedAmqp });
  await expect(run(['--via', 'gateway', 'call', 'nope'], io)).resolves.toBe(1);
  expect(io.errors()).toContain('error -32601');
  await expect(run(['--via', 'gateway', 'call', 'busy'], io)).resolves.toBe(1);
  expect(io.errors()).toContain('error -32004');
});

it('--via gateway: notify posts a notification, status reads inflight.status', async () => {
  const io = fakeIo({ WARREN_GATEWAY: base, WARREN_VIA: 'gateway' });
  await expect(run(['notify', 'logMessage', 'hi'], io)).resolves.toBe(0);
  expect(seen[0]?.body).toEqual({ jsonrpc: '2.0', method: 'logMessage', params: ['hi'] });
  await expect(run(['--json', 'status', 'abc'], io)).resolves.toBe(0);
  expect(JSON.parse(io.output().trim().split('\n').pop() ?? '')).toMatchObject({ callId: 'abc', state: 'done' });
  expect(seen[1]?.body).toMatchObject({ method: 'inflight.status', params: { callId: 'abc' } });
});

it('--via gateway: enqueue posts to /jobs (id, delay and timeout as body and headers); a taken id says so; -32601 exits 1', async () => {
  const io = fakeIo({ WARREN_GATEWAY: base, WARREN_VIA: 'gateway' });
  await expect(run(['enqueue', 'report.render', '{"size":2}', '--in', '3s', '--id', 'r-1', '--timeout', '5000'], io)).resolves.toBe(0);
  expect(io.output()).toBe('queued r-1\n');
  const posted = seen.find((s) => s.path === '/jobs');
  expect(posted?.body).toEqual({ method: 'report.render', params: { size: 2 }, id: 'r-1' });
  expect(posted?.headers).toMatchObject({ 'x-delay-ms': '3000', 'x-timeout-ms': '5000' });
  await expect(run(['enqueue', 'report.render', '--id', 'taken'], io)).resolves.toBe(0);
  expect(io.output()).toContain('duplicate taken: already running, not queued again');
  await expect(run(['enqueue', 'nope'], io)).resolves.toBe(1);
  expect(io.errors()).toContain('error -32601');
});

it('--via gateway with nothing listening exits 3; a --via it cannot read exits 2', async () => {
  const io = fakeIo({ WARREN_GATEWAY: 'http://127.0.0.1:1' });
  await expect(run(['--via', 'gateway', 'call', 'add', '1', '2'], io)).resolves.toBe(3);
  expect(io.errors()).toContain('cannot reach the gateway');
  await expect(run(['--via', 'pigeon', 'call', 'add', '1', '2'], fakeIo({}))).resolves.toBe(2);
});
