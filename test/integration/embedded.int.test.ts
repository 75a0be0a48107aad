// `npm start` on a machine with Node alone: AMQP_URL and REDIS_URL unset, their default ports moved
// to closed ones (WARREN_DEFAULT_AMQP_URL / WARREN_DEFAULT_REDIS_URL, scripts/ensure-services.ts),
// and Docker out of reach (DOCKER_HOST pointing nowhere, and WARREN_DOCKER=off so that an engine
// installed on the machine's default socket is not used either). It must come up embedded,
// say so, answer the example files over HTTP, serve MCP over both transports to the SDK client,
// answer `warren call add 4 5` with 9 through the gateway, and stop cleanly.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { Teardown, freePort, spawnTs, waitFor, type TsChild } from '@warren/testkit';
import { expectExampleOverHttp, loadExamples } from '../support/examples';
import { repoRoot, runCli } from './helpers';

const td = new Teardown();
let child: TsChild;
let url: string;
/** What a machine without RabbitMQ, Redis or Docker looks like to `npm start` and the CLI. */
let bare: Record<string, string>;

beforeAll(async () => {
  const [port, amqpPort, redisPort, dockerPort] = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
  bare = {
    AMQP_URL: '',
    REDIS_URL: '',
    WARREN_DEFAULT_AMQP_URL: `amqp://guest:guest@127.0.0.1:${amqpPort}`,
    WARREN_DEFAULT_REDIS_URL: `redis://127.0.0.1:${redisPort}`,
    DOCKER_HOST: `tcp://127.0.0.1:${dockerPort}`,
    WARREN_DOCKER: 'off',
    WARREN_EMBEDDED: '',
    WARREN_NAMESPACE: '',
  };
  url = `http://127.0.0.1:${port}`;
  child = spawnTs(path.join(repoRoot, 'scripts', 'start.ts'), [], { ...bare, GATEWAY_PORT: String(port), LOG_LEVEL: 'warn', LOG_FORMAT: 'json' });
  td.add(() => child.kill('SIGKILL').then(() => undefined));
  await child.waitForLine(/WARREN IS RUNNING EMBEDDED/, 60_000);
  await child.waitForLine(/^warren: embedded .*gateway and console at/, 60_000);
}, 90_000);
afterAll(() => td.run());

it('says it is embedded and not durable: the banner, /readyz and /services', async () => {
  expect(child.stdout.join('\n')).toMatch(/NOTHING DURABLE[\s\S]*Why: no RabbitMQ or Redis answers/);
  const ready = (await (await fetch(`${url}/readyz`)).json()) as { status: string; mode: string };
  expect(ready).toMatchObject({ status: 'ready', mode: 'embedded' });
  const services = (await (await fetch(`${url}/services`)).json()) as { mode: string; services: { name: string; durable: boolean; instances: unknown[] }[] };
  expect(services.mode).toBe('embedded');
  const byName = new Map(services.services.map((s) => [s.name, s]));
  expect(byName.get('calculator')?.instances).toHaveLength(2);
  expect(byName.get('jobs')).toMatchObject({ durable: false, instances: [expect.anything(), expect.anything()] });
  expect(byName.get('audit')?.instances).toHaveLength(1);
});

it('serves discovery (rpc.discover) and metrics like the processes do', async () => {
  const res = await fetch(`${url}/rpc`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"jsonrpc":"2.0","method":"rpc.discover","id":1}' });
  const doc = ((await res.json()) as { result: { openrpc: string; methods: { name: string }[] } }).result;
  expect(doc.openrpc).toMatch(/^1\./);
  expect(doc.methods.map((m) => m.name)).toEqual(expect.arrayContaining(['add', 'calculate', 'report.render', 'audit.recent', 'inflight.status']));
  await fetch(`${url}/rpc`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"jsonrpc":"2.0","method":"add","params":[1,2],"id":2}' });
  const metrics = await (await fetch(`${url}/metrics`)).text();
  expect(metrics).toMatch(/^warren_gateway_calls_total\{[^}]*method="add"[^}]*\} [1-9]/m);
  expect(metrics).toMatch(/^warren_tracking_instances\{[^}]*service="jobs"[^}]*state="tracking"[^}]*\} 2$/m);
});

describe.each(['spec-examples.json', 'seed-examples.json'] as const)('%s over POST /rpc, embedded', (file) => {
  const examples = loadExamples(file).filter((e) => !e.mcp);
  it.each(examples.map((e) => [e.name, e] as const))('%s', (_name, example) => expectExampleOverHttp(url, example));
});

it('the audit service recorded the examples\' notifications (in memory)', async () => {
  const recorded = async (): Promise<string[]> => {
    const res = await fetch(`${url}/rpc`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"jsonrpc":"2.0","method":"audit.recent","params":{"limit":100},"id":1}' });
    return ((await res.json()) as { result: { method: string }[] }).result.map((e) => e.method).sort();
  };
  await waitFor(async () => (await recorded()).length >= 6, { timeoutMs: 10_000, intervalMs: 100, message: 'notifications recorded' });
  expect(await recorded()).toEqual(expect.arrayContaining(['logMessage', 'notifyEvent', 'notify_hello', 'notify_sum', 'update']));
});

describe.each([
  ['SSE', (): Transport => new SSEClientTransport(new URL(`${url}/sse`))],
  ['Streamable HTTP', (): Transport => new StreamableHTTPClientTransport(new URL(`${url}/mcp`))],
] as const)('the MCP SDK client over %s', (_name, transport) => {
  let client: Client;
  beforeAll(async () => {
    client = new Client({ name: 'warren-embedded-test', version: '0.0.0' });
    await client.connect(transport());
  });
  afterAll(() => client.close());

  it('lists the calculate tool and runs the design notes\' MCP examples', async () => {
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['calculate']);
    for (const example of loadExamples('seed-examples.json').filter((e) => e.mcp)) {
      const request = JSON.parse(example.request) as { params: { name: string; arguments: Record<string, unknown> } };
      const result = await client.callTool({ name: request.params.name, arguments: request.params.arguments });
      if (example.response !== undefined) {
        expect(result).toMatchObject((example.response as { result: Record<string, unknown> }).result);
      } else {
        expect(result.isError).toBe(true);
        expect((result.content as { text: string }[])[0]?.text).toMatch(/^Error executing tool calculate: \S/);
      }
    }
  });
});

describe('the warren CLI, through the gateway (no RabbitMQ to reach)', () => {
  const warren = (args: string[]) => runCli(args, { env: { ...bare, WARREN_GATEWAY: url, WARREN_VIA: '' } });

  it('`warren call add 4 5` prints 9', async () => {
    await expect(warren(['call', 'add', '4', '5'])).resolves.toMatchObject({ code: 0, stdout: '9\n' });
  });

  it('sees a running job in `warren inflight`, `warren cancel` stops it, `warren status` says so', async () => {
    // A long job (30 steps of 1 s): it is still running whenever the CLI, slow to start on a loaded machine, looks.
    const job = warren(['--json', 'call', 'report.render', '{"size":30}', '--timeout', '60000']);
    let callId = '';
    await waitFor(async () => {
      const listed = JSON.parse((await warren(['--json', 'inflight'])).stdout) as { calls: { callId: string; method: string }[] };
      callId = listed.calls.find((c) => c.method === 'report.render')?.callId ?? '';
      return callId !== '';
    }, { timeoutMs: 25_000, intervalMs: 200, message: 'report.render in flight' });
    expect(JSON.parse((await warren(['--json', 'cancel', callId])).stdout)).toMatchObject({ callId, outcome: 'signalled' });
    const answered = await job;
    expect(answered.code).toBe(1);
    expect(JSON.parse(answered.stdout)).toMatchObject({ error: { code: -32003 } });
    expect(JSON.parse((await warren(['--json', 'status', callId])).stdout)).toMatchObject({ state: 'cancelled' });
  }, 60_000);

  it('`warren services` lists what runs, from the gateway', async () => {
    const listed = JSON.parse((await warren(['--json', 'services'])).stdout) as { source: string; services: { name: string }[] };
    expect(listed.source).toBe('gateway');
    expect(listed.services.map((s) => s.name)).toEqual(expect.arrayContaining(['calculator', 'audit', 'jobs']));
  });
});

it('stops on SIGTERM, every part drained, exit 0', async () => {
  const exit = await child.kill('SIGTERM');
  expect(exit.code).toBe(0);
  expect(child.stdout.join('\n')).toContain('warren: embedded system stopped');
}, 30_000);

it('WARREN_EMBEDDED=1 runs embedded without looking, and Ctrl-C (SIGINT to the process group) stops it once, exit 0', async () => {
  const port = await freePort();
  const ctrlC = spawn(process.execPath, ['--import', 'tsx', path.join(repoRoot, 'scripts', 'start.ts')], {
    cwd: repoRoot, detached: true, stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...bare, WARREN_EMBEDDED: '1', GATEWAY_PORT: String(port), LOG_LEVEL: 'warn', LOG_FORMAT: 'json' },
  });
  const pid = ctrlC.pid ?? 0;
  td.add(() => {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // already gone
    }
  });
  const lines: string[] = [];
  createInterface({ input: ctrlC.stdout }).on('line', (l) => lines.push(l));
  createInterface({ input: ctrlC.stderr }).on('line', (l) => lines.push(l));
  const exited = once(ctrlC, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  await waitFor(() => lines.some((l) => l.startsWith('warren: embedded ')), { timeoutMs: 60_000, intervalMs: 100, message: 'embedded system up' });
  expect(lines.join('\n')).toContain('Why: WARREN_EMBEDDED=1.');
  process.kill(-pid, 'SIGINT');
  const [code] = await exited;
  expect(code).toBe(0);
  expect(lines.filter((l) => l === 'warren: embedded system stopped')).toHaveLength(1);
}, 90_000);
