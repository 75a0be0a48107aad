// Every `warren` command run as a child process (`node libs/cli/bin/warren.js`,
// what `npx warren` runs), against services started in this process on the
// real RabbitMQ and Redis, in a namespace of this file's own.
import { createServer, type Server } from 'node:http';
import { writeFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { connectClient, startService, type RpcClient } from '@warren/amqp';
import { MemoryEventLog } from '@warren/eventlog';
import { InflightView, createRedisTracker } from '@warren/inflight';
import { CancelledError, type JsonValue } from '@warren/jsonrpc';
import { Teardown, amqpUrl, redisUrl, waitFor } from '@warren/testkit';
import { TestNamespace } from '../../../test/support/amqp';
import { deleteRedisKeys, runCli } from '../../../test/integration/helpers';
import { calculatorMethods } from '../../../services/calculator/src/methods';
import { jobsMethods } from '../../../services/jobs/src/methods';

const td = new Teardown();
const ns = new TestNamespace().withDelayChain();
const heard: [string, JsonValue | undefined][] = [];
let client: RpcClient;
let env: Record<string, string>;
let dir: string;

beforeAll(async () => {
  td.add(() => ns.destroy());
  td.add(() => deleteRedisKeys(`${ns.namespace}:`));
  const urls = amqpUrl();
  // An hour between announcements: `warren services` hears of them only by asking (announce-now).
  const common = { urls, namespace: ns.namespace, announceIntervalMs: 3_600_000 };
  const calc = await startService({ ...common, name: ns.service('calculator'), methods: calculatorMethods });
  td.add(() => calc.close());
  const events = await startService({
    ...common,
    name: ns.service('listener'),
    notifications: { notify_hello: { handler: (p) => void heard.push(['notify_hello', p as JsonValue]) }, logMessage: { handler: (p) => void heard.push(['logMessage', p as JsonValue]) } },
  });
  td.add(() => events.close());
  const tracker = createRedisTracker({ redis: redisUrl(), keyPrefix: ns.namespace, heartbeatMs: 200, leaseMs: 3000 });
  const view = new InflightView({ redis: redisUrl(), keyPrefix: ns.namespace });
  td.add(() => view.close());
  const jobs = await startService({ ...common, name: ns.service('jobs'), instanceId: 'worker-1', prefetch: 4, tracker, methods: jobsMethods({ store: new MemoryEventLog(), prefix: 'cli', stepMs: 100, status: (id) => view.status(id) }) });
  td.add(() => jobs.close());
  client = await connectClient({ urls, namespace: ns.namespace, defaultTimeoutMs: 20_000 });
  td.add(() => client.close());
  dir = await mkdtemp(path.join(tmpdir(), 'warren-cli-'));
  td.add(() => rm(dir, { recursive: true, force: true }));
  // WARREN_GATEWAY=off: a broker someone runs on this machine must not answer for our namespace.
  env = { AMQP_URL: urls, REDIS_URL: redisUrl(), WARREN_NAMESPACE: ns.namespace, WARREN_GATEWAY: 'off' };
}, 30_000);
afterAll(() => td.run());

const warren = (args: string[], input?: string) => runCli(args, { env, ...(input === undefined ? {} : { input }) });

describe('warren call', () => {
  it('prints the result as JSON and exits 0: `warren call add 4 5` prints 9', async () => {
    await expect(warren(['call', 'add', '4', '5'])).resolves.toEqual({ code: 0, stdout: '9\n', stderr: '' });
  });

  it('takes params as one JSON value, or words each parsed as JSON', async () => {
    expect((await warren(['call', 'subtract', '{"minuend":42,"subtrahend":23}'])).stdout).toBe('19\n');
    expect((await warren(['call', 'sum', '[1,2,4]'])).stdout).toBe('7\n');
    expect((await warren(['call', 'add', '--', '-5', '3'])).stdout).toBe('-2\n');
    expect(JSON.parse((await warren(['call', 'get_data'])).stdout)).toEqual(['hello', 5]);
    expect((await warren(['call', 'calculate', '{"expression":"1+3+6"}'])).stdout).toBe('"10"\n');
  });

  it('prints the JSON-RPC response with --json, with the --id given', async () => {
    const r = await warren(['--json', 'call', 'add', '1', '2', '--id', 'req-7']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ jsonrpc: '2.0', result: 3, id: 'req-7' });
  });

  it('exits 1 printing the error code and message on an error answer', async () => {
    const bad = await warren(['call', 'calculate', '{"expression":"1/("}']);
    expect(bad.code).toBe(1);
    expect(bad.stdout).toBe('');
    expect(bad.stderr).toMatch(/^error -32602: Unexpected end of expression at position 3/);
    const missing = await warren(['--json', 'call', 'no.such.method']);
    expect(missing.code).toBe(1);
    expect(JSON.parse(missing.stdout)).toMatchObject({ error: { code: -32601, data: { reason: 'no_route', method: 'no.such.method', namespace: ns.namespace, suggestions: [] } }, id: 1 });
  });

  it('answers a misspelt method with -32601 naming the namespace and the announced methods near it', async () => {
    const r = await warren(['call', 'substract', '1', '2']);
    expect(r.code).toBe(1);
    expect(r.stderr.split('\n')[0]).toBe(`error -32601: Method not found: "substract" is served by nobody in namespace "${ns.namespace}"; did you mean "subtract"? (RPC_NO_ROUTE)`);
    const json = await warren(['--json', 'call', 'substract', '1', '2']);
    expect(JSON.parse(json.stdout)).toMatchObject({ error: { code: -32601, data: { reason: 'no_route', method: 'substract', namespace: ns.namespace, suggestions: ['subtract'] } } });
  });

  it('gives up at --timeout with -32001', async () => {
    const r = await warren(['call', 'report.render', '{"size":50}', '--timeout', '300']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^error -32001: Deadline exceeded/);
  });
});

describe('warren notify and batch', () => {
  it('publishes a notification that subscribers receive', async () => {
    const r = await warren(['notify', 'notify_hello', '7']);
    expect(r).toMatchObject({ code: 0, stdout: 'sent notify_hello\n' });
    await warren(['notify', 'logMessage', 'User logged in']);
    await waitFor(() => heard.length >= 2);
    expect(heard).toEqual(expect.arrayContaining([['notify_hello', [7]], ['logMessage', ['User logged in']]]));
    const json = await warren(['--json', 'notify', 'notify_hello', '8']);
    expect(JSON.parse(json.stdout)).toEqual({ sent: true, method: 'notify_hello' });
  });

  it('delays a notification with --in and a call with --at, neither starting early', async () => {
    const sent = Date.now();
    const r = await warren(['notify', 'notify_hello', '99', '--in', '1500ms']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^sent notify_hello \(due \d{4}-\d{2}-\d{2}T[\d:.]+Z\)\n$/);
    await waitFor(() => heard.some(([, p]) => JSON.stringify(p) === '[99]'), { timeoutMs: 10_000 });
    expect(Date.now() - sent).toBeGreaterThanOrEqual(1500);
    const at = new Date(Date.now() + 1200);
    const called = await warren(['call', 'add', '2', '3', '--at', at.toISOString()]);
    expect(called).toMatchObject({ code: 0, stdout: '5\n' });
    expect(Date.now()).toBeGreaterThanOrEqual(at.getTime());
    expect((await warren(['notify', 'notify_hello', '1', '--in', 'soon'])).code).toBe(2);
  });

  const batch = [
    { jsonrpc: '2.0', method: 'sum', params: [1, 2, 4], id: '1' },
    { jsonrpc: '2.0', method: 'notify_hello', params: [7] },
    { jsonrpc: '2.0', method: 'subtract', params: [42, 23], id: '2' },
    { foo: 'boo' },
    { jsonrpc: '2.0', method: 'foo.get', params: { name: 'myself' }, id: '5' },
    { jsonrpc: '2.0', method: 'get_data', id: '9' },
  ];

  it('sends a batch from a file and prints the responses in order as JSON; exits 1 as some failed', async () => {
    const file = path.join(dir, 'batch.json');
    await writeFile(file, JSON.stringify(batch));
    const r = await warren(['--json', 'batch', file]);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toEqual([
      { jsonrpc: '2.0', result: 7, id: '1' },
      { jsonrpc: '2.0', result: 19, id: '2' },
      { jsonrpc: '2.0', error: { code: -32600, message: 'Invalid Request' }, id: null },
      { jsonrpc: '2.0', error: { code: -32601, message: `Method not found: "foo.get" is served by nobody in namespace "${ns.namespace}"`, data: { reason: 'no_route', method: 'foo.get', namespace: ns.namespace, suggestions: [] } }, id: '5' },
      { jsonrpc: '2.0', result: ['hello', 5], id: '9' },
    ]);
  });

  it('reads a batch from stdin with -, printing a table; exits 0 when all succeeded', async () => {
    const r = await warren(['batch', '-'], JSON.stringify([{ method: 'add', params: [1, 1], id: 1 }, { method: 'notify_hello', params: [1] }]));
    expect(r.code).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^#\s+id\s+method\s+outcome$/);
    expect(lines[1]).toMatch(/^1\s+1\s+add\s+2$/);
    expect(lines[2]).toMatch(/^2\s+-\s+notify_hello\s+\(notification sent\)$/);
  });
});

describe('warren services', () => {
  it('lists live services, instances, methods (tools marked) and subscriptions from the RabbitMQ announcements', async () => {
    const r = await warren(['services']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^calculator {2}1 instance$/m);
    // The tracked jobs worker shows its tracking state; untracked services have no such column.
    expect(r.stdout).toMatch(/^ {2}worker-1\s+\S+\s+\d+\s+tracking$/m);
    expect(r.stdout).toMatch(/methods: add, subtract, sum, get_data, calculate \(tool\)/);
    expect(r.stdout).toMatch(/notifications: notify_hello, logMessage|notifications: logMessage, notify_hello/);
    expect(r.stdout).toMatch(/source: registry/);
    expect(r.stdout).toMatch(/methods: report\.render \(job\), report\.progress$/m);
    const json = JSON.parse((await warren(['--json', 'services'])).stdout) as { source: string; services: { name: string; methods: { name: string; tool?: string }[] }[] };
    expect(json.source).toBe('registry');
    expect(json.services.map((s) => s.name).sort()).toEqual(['calculator', 'jobs', 'listener']);
    expect(json.services.find((s) => s.name === 'calculator')?.methods).toContainEqual({ name: 'calculate', description: expect.any(String), tool: 'calculate' });
  });

  it("uses the gateway's GET /services when it answers for our namespace", async () => {
    const body = { namespace: ns.namespace, services: [{ name: 'from-gateway', instances: [{ instanceId: 'g1', startedAt: Date.now(), running: 0 }], methods: [{ name: 'ping' }], notifications: [] }], conflicts: [] };
    const server: Server = createServer((req, res) => {
      res.writeHead(req.url === '/services' ? 200 : 404, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    td.add(() => new Promise((r) => server.close(r)));
    const gateway = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    const r = await runCli(['--json', 'services', '--wait', '100'], { env: { ...env, WARREN_GATEWAY: gateway } });
    expect(JSON.parse(r.stdout)).toMatchObject({ source: 'gateway', services: [{ name: 'from-gateway' }] });
    // A gateway serving another namespace is not believed.
    body.namespace = 'someone-else';
    const other = await runCli(['--json', 'services'], { env: { ...env, WARREN_GATEWAY: gateway } });
    expect(JSON.parse(other.stdout)).toMatchObject({ source: 'registry' });
  });
});

describe('warren inflight, status and cancel', () => {
  it('shows a running job, its status by call id, cancels it (the caller gets -32003), then shows it cancelled', async () => {
    const callId = client.nextCallId();
    // 40 s of steps (it is cancelled below), and a deadline past them: still running after five CLI
    // runs on a busy machine (each took 3-4 s with the machine's two cores loaded; the client's default
    // 20 s deadline ran out first and the job read as expired).
    const job = client.call('report.render', { size: 400 }, { id: 1, timeoutMs: 120_000 }).catch((e: unknown) => e);
    await waitFor(async () => JSON.parse((await warren(['--json', 'inflight'])).stdout).calls.some((c: { callId: string }) => c.callId === callId), { timeoutMs: 10_000, intervalMs: 100 });

    const table = await warren(['inflight']);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/^call id\s+service\s+method\s+worker\s+attempt\s+age\s+deadline in\s+progress\s+state$/m);
    expect(table.stdout).toContain(`${callId}  jobs     report.render  worker-1`);

    const watch = await warren(['inflight', '--watch', '--interval', '200', '--count', '2']);
    expect(watch.code).toBe(0);
    expect(watch.stdout.match(/in flight {2}\(every 200ms, Ctrl-C to stop\)/g)).toHaveLength(2);
    expect(watch.stdout.split(callId).length - 1).toBe(2);
    const watchJson = (await warren(['--json', 'inflight', '--watch', '--interval', '100', '--count', '3'])).stdout.trim().split('\n');
    expect(watchJson).toHaveLength(3);

    const running = await warren(['status', callId]);
    expect(running.stdout).toMatch(new RegExp(`^${callId.replace(/[.]/g, '\\.')} {2}running$`, 'm'));
    expect(running.stdout).toMatch(/method\s+report\.render/);

    const cancel = await warren(['cancel', callId]);
    expect(cancel).toMatchObject({ code: 0, stdout: `cancelled ${callId}: its worker worker-1 was told to stop\n` });
    expect(await job).toBeInstanceOf(CancelledError);

    const done = JSON.parse((await warren(['--json', 'status', callId])).stdout);
    expect(done).toMatchObject({ callId, state: 'cancelled', response: { error: { code: -32003 } } });
    expect((await warren(['cancel', callId])).stdout).toMatch(/already|too late/);
    expect(JSON.parse((await warren(['--json', 'status', 'never.seen'])).stdout)).toMatchObject({ state: 'unknown' });
  }, 120_000);

  it('cancels a call running on an untracked worker, and does not call it "not started"', async () => {
    const started: string[] = [];
    const untracked = await startService({
      urls: amqpUrl(), namespace: ns.namespace, name: ns.service('untracked'), announceIntervalMs: 3_600_000,
      methods: { 'untracked.wait': { handler: (_p, ctx) => new Promise((resolve) => {
        started.push(ctx.callId);
        ctx.signal.addEventListener('abort', () => resolve('stopped'), { once: true });
      }) } },
    });
    td.add(() => untracked.close());
    const callId = client.nextCallId();
    const call = client.call('untracked.wait', [], { timeoutMs: 20_000 }).catch((e: unknown) => e);
    await waitFor(() => started.includes(callId), { message: 'the untracked handler started' });
    const cancel = await warren(['cancel', callId]);
    expect(cancel.code).toBe(0);
    expect(cancel.stdout).toBe(`cancelled ${callId}: no tracked worker runs it; a worker running it untracked was told on RabbitMQ to stop, and one that takes it later answers Cancelled without running it\n`);
    expect(await call).toBeInstanceOf(CancelledError);
  }, 30_000);

  it('prints the call id with --show-id so a call can be looked up and cancelled from another shell', async () => {
    const r = await warren(['call', 'report.render', '{"size":1}', '--show-id', '--persistent']);
    expect(r.code).toBe(0);
    const callId = /^call id: (\S+)$/m.exec(r.stderr)?.[1] ?? '';
    expect(JSON.parse(r.stdout)).toMatchObject({ report: `report-${callId}` });
    expect(JSON.parse((await warren(['--json', 'status', callId])).stdout)).toMatchObject({ state: 'done', method: 'report.render' });
  });

  it('exits 3 when Redis cannot be reached', async () => {
    const r = await runCli(['status', 'x.1'], { env: { ...env, REDIS_URL: 'redis://127.0.0.1:1' } });
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/^error CLI_UNREACHABLE: cannot reach Redis at redis:\/\/127\.0\.0\.1:1/);
  });
});

describe('warren bench', () => {
  it('prints a table of calls/s and latency percentiles, with a progress bar', async () => {
    const r = await warren(['bench', '--calls', '300', '--concurrency', '8', '--progress']);
    expect(r.code).toBe(0);
    const [header, row] = r.stdout.trim().split('\n');
    expect(header).toMatch(/^method\s+calls\s+concurrency\s+errors\s+calls\/s\s+p50 ms\s+p90 ms\s+p99 ms\s+max ms$/);
    expect(row).toMatch(/^add\s+300\s+8\s+0\s+\d+\s+[\d.]+\s+[\d.]+\s+[\d.]+\s+[\d.]+$/);
    expect(r.stderr).toContain('100% 300/300');
  });

  it('reports JSON with --json, and exits 1 when calls fail', async () => {
    const ok = JSON.parse((await warren(['--json', 'bench', '--calls', '100', '--concurrency', '4', '--method', 'sum', '--params', '[1,2,3]'])).stdout);
    expect(ok).toMatchObject({ method: 'sum', calls: 100, ok: 100, errors: 0, concurrency: 4 });
    expect(ok.callsPerSecond).toBeGreaterThan(0);
    expect(ok.latencyMs.p50).toBeLessThanOrEqual(ok.latencyMs.p99);
    const failing = await warren(['--json', 'bench', '--calls', '20', '--concurrency', '2', '--method', 'add', '--params', '["x"]']);
    expect(failing.code).toBe(1);
    expect(JSON.parse(failing.stdout)).toMatchObject({ errors: 20, errorCodes: { '-32602': 20 } });
  });
});
