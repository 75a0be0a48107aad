// The cross-language example (examples/python/, pika, written from
// docs/protocol.md) against the real system: the Python client against a
// TypeScript service, and the TypeScript client against the Python service,
// including a cancel from each side stopping a call where it runs.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import amqp from 'amqplib';
import { RpcClient, ServiceRegistry, connectClient, startService } from '@warren/amqp';
import { AmqpConnection } from '@warren/amqp-transport';
import { ErrorCode, RawNumberId, wireErrorOf } from '@warren/jsonrpc';
import { Teardown, amqpUrl, waitFor } from '@warren/testkit';
import { TestNamespace } from '../support/amqp';
import { pythonWithPika } from '../support/python';

const dir = path.join(__dirname, '..', '..', 'examples', 'python');
const td = new Teardown();
const ns = new TestNamespace();
const urls = amqpUrl();
const url = Array.isArray(urls) ? String(urls[0]) : String(urls);

/** The wire code a call fails with: the Python service's answer, or the wire form of a failure on the caller's side. */
async function codeOf(p: Promise<unknown>): Promise<number | undefined> {
  try {
    await p;
    return undefined;
  } catch (err) {
    return wireErrorOf(err)?.code ?? -1;
  }
}

interface Child {
  readonly proc: ChildProcess;
  readonly lines: string[];
  readonly exited: Promise<number | null>;
}

function run(args: string[]): Child {
  const proc = spawn(pythonWithPika(), ['-u', ...args], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  let stderr = '';
  proc.stdout?.setEncoding('utf8').on('data', (chunk: string) => lines.push(...chunk.split('\n').filter(Boolean)));
  proc.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => {
    if (code !== 0 && stderr) process.stderr.write(`python ${args[0]}: ${stderr}\n`);
    resolve(code);
  }));
  return { proc, lines, exited };
}

beforeAll(() => td.add(() => ns.destroy()));
afterAll(() => td.run());

describe('the Python client against a TypeScript service', () => {
  const aborted: string[] = [];
  beforeAll(async () => {
    const service = await startService({
      urls, namespace: ns.namespace, name: ns.service('ts-side'),
      methods: {
        add: {
          params: { oneOf: [{ type: 'array', items: { type: 'number' }, minItems: 2, maxItems: 2 }, { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] }] },
          handler: (p) => (Array.isArray(p) ? (p as number[]).reduce((x, y) => x + y, 0) : (p as { a: number; b: number }).a + (p as { a: number; b: number }).b),
        },
        fail: { handler: () => { throw new Error('fails on purpose'); } },
        sleep: {
          handler: (p, ctx) => new Promise((resolve) => {
            const timer = setTimeout(() => resolve('slept'), (p as number[])[0]);
            ctx.signal.addEventListener('abort', () => {
              clearTimeout(timer);
              aborted.push(ctx.callId);
              resolve('stopped');
            }, { once: true });
          }),
        },
      },
      notifications: { tick: { handler: () => undefined } },
    });
    td.add(() => service.close());
  });

  it('passes every check of client_demo.py, and its cancel aborted the handler here', async () => {
    const child = run(['client_demo.py', url, ns.namespace]);
    td.add(async () => void child.proc.kill());
    const code = await child.exited;
    expect(child.lines.filter((l) => l.startsWith('FAIL'))).toEqual([]);
    expect(code).toBe(0);
    const cancelled = child.lines.find((l) => l.startsWith('cancelled call id '))?.slice('cancelled call id '.length);
    expect(cancelled).toBeDefined();
    await waitFor(() => aborted.includes(cancelled ?? ''), { message: 'the TypeScript handler saw the Python cancel' });
  }, 60_000);
});

describe('the TypeScript client against the Python service', () => {
  let child: Child;
  let client: RpcClient;
  let registry: ServiceRegistry;
  const name = ns.service('py-side');

  beforeAll(async () => {
    const connection = new AmqpConnection({ urls });
    await connection.start();
    td.add(() => connection.close());
    registry = await ServiceRegistry.start(connection, { namespace: ns.namespace });
    td.add(() => registry.close());
    child = run(['service_main.py', url, ns.namespace, name]);
    td.add(async () => {
      child.proc.kill('SIGTERM');
      await child.exited;
    });
    await waitFor(() => child.lines.includes('ready'), { timeoutMs: 20_000, message: 'python service ready' });
    client = await RpcClient.create(connection, { namespace: ns.namespace, defaultTimeoutMs: 10_000 });
    td.add(() => client.close());
  }, 30_000);

  it('is discovered from its announcement', async () => {
    await waitFor(() => registry.list().some((i) => i.service === name), { message: 'python announcement heard' });
    const instance = registry.list().find((i) => i.service === name);
    expect(instance?.methods.map((m) => m.name).sort()).toEqual(['py.add', 'py.echo', 'py.fail', 'py.sleep']);
  });

  it('answers calls, errors, batches and exact ids', async () => {
    expect(await client.call('py.add', [4, 5])).toBe(9);
    expect(await client.call('py.add', { a: 1, b: 2 })).toBe(3);
    expect(await codeOf(client.call('py.add', ['x', 1]))).toBe(ErrorCode.InvalidParams);
    expect(await codeOf(client.call('py.fail', []))).toBe(-32000);
    const batch = await client.batch([{ method: 'py.add', params: [1, 1] }, { method: 'py.echo', params: ['hi'] }]);
    expect(batch.map((b) => (b.status === 'fulfilled' ? b.value : 'rejected'))).toEqual([2, ['hi']]);
    const response = await client.request({ jsonrpc: '2.0', method: 'py.echo', params: [], id: new RawNumberId('9007199254740993') });
    expect(response.id).toEqual(new RawNumberId('9007199254740993'));
  });

  it.each(['1.0', '1.50', '-0', '1E2', '0.1000000000000000055511151231257827', '9007199254740993'])('echoes id %s byte for byte, through the client and as the reply body', async (text) => {
    const response = await client.request({ jsonrpc: '2.0', method: 'py.echo', params: [], id: new RawNumberId(text) });
    expect(response.id).toEqual(new RawNumberId(text));
    const model = await amqp.connect(url);
    try {
      const ch = await model.createChannel();
      const { queue } = await ch.assertQueue('', { exclusive: true });
      const body = await new Promise<string>((resolve) => {
        void ch.consume(queue, (msg) => msg && resolve(msg.content.toString()), { noAck: true });
        ch.publish(ns.names.requestExchange, 'py.echo', Buffer.from(`{"jsonrpc":"2.0","method":"py.echo","params":[],"id":${text}}`), { replyTo: queue, correlationId: 'raw-1', contentType: 'application/json' });
      });
      // The id's very text; Python's json would have written 1.5, 0, 100.0 or 0.1 for some of them.
      expect(body).toMatch(new RegExp(`"id": ?${text.replace(/[.+]/g, '\\$&')}[,}]`));
    } finally {
      await model.close();
    }
  });

  it('reads x-warren-deadline as protocol v1.1 says: "1e3" and a timestamp ignored, a decimal read (as passed), a passed batch answered per entry', async () => {
    const model = await amqp.connect(url);
    try {
      const ch = await model.createChannel();
      const { queue } = await ch.assertQueue('', { exclusive: true });
      const got = new Map<string, string>();
      await ch.consume(queue, (msg) => msg && got.set(String(msg.properties.correlationId), msg.content.toString()), { noAck: true });
      const send = async (id: string, body: string, deadline: unknown): Promise<unknown> => {
        ch.publish(ns.names.requestExchange, 'py.add', Buffer.from(body), { replyTo: queue, correlationId: id, contentType: 'application/json', headers: { 'x-warren-deadline': deadline } });
        await waitFor(() => got.has(id), { message: `the Python service's answer to ${id}` });
        return JSON.parse(got.get(id) ?? 'null');
      };
      const add = '{"jsonrpc":"2.0","method":"py.add","params":[4,5],"id":1}';
      expect(await send('d.1', add, '1e3')).toMatchObject({ result: 9 });
      expect(await send('d.2', add, { '!': 'timestamp', value: Math.floor(Date.now() / 1000) })).toMatchObject({ result: 9 });
      expect(await send('d.3', add, { '!': 'decimal', value: { places: 0, digits: 4_000_000_000 } })).toMatchObject({ error: { code: ErrorCode.DeadlineExceeded, data: { reason: 'deadline_passed' } } });
      const batch = `[${add},{"jsonrpc":"2.0","method":"py.add","params":[1,1]},{"jsonrpc":"2.0","method":"py.add","params":[1,2],"id":2}]`;
      expect(await send('d.4', batch, Date.now() - 1000)).toEqual([1, 2].map((id) => ({ jsonrpc: '2.0', id, error: { code: ErrorCode.DeadlineExceeded, message: 'Deadline exceeded', data: { reason: 'deadline_passed' } } })));
    } finally {
      await model.close();
    }
  });

  it('answers -32001 for a call past its deadline', async () => {
    expect(await codeOf(client.call('py.sleep', [5000], { timeoutMs: 300 }))).toBe(ErrorCode.DeadlineExceeded);
  });

  it("honours a caller's abort: the Python handler stops", async () => {
    const ac = new AbortController();
    const callId = client.nextCallId();
    const call = client.call('py.sleep', [20_000], { signal: ac.signal, id: 'abort-me' });
    await waitFor(() => child.lines.includes(`started ${callId}`), { message: 'python handler started' });
    ac.abort();
    expect(await codeOf(call)).toBe(ErrorCode.Cancelled);
    await waitFor(() => child.lines.includes(`cancelled ${callId}`), { message: 'python service stopped the call' });
  });

  it('a cancel from another process stops the call, and its caller gets -32003 from the Python service', async () => {
    const other = await connectClient({ urls, namespace: ns.namespace });
    td.add(() => other.close());
    const callId = client.nextCallId();
    const call = client.call('py.sleep', [20_000], { id: 'cancel-me' });
    await waitFor(() => child.lines.includes(`started ${callId}`), { message: 'python handler started' });
    await other.cancelOnWire(callId, 'test');
    expect(await codeOf(call)).toBe(ErrorCode.Cancelled);
    expect(child.lines).toContain(`cancelled ${callId}`);
  });
});
