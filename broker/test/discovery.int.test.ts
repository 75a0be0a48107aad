// Discovery you can trust: announcements that do not fit the schema are
// dropped whole and break nothing (rpc.discover, /services, MCP tools/list,
// metrics), and a broker that starts after its services knows all of them
// once /readyz says ready, instead of one announcement interval later.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { connectClient, startService } from '@warren/amqp';
import { Teardown, amqpUrl, waitFor } from '@warren/testkit';
import { TestNamespace, publishRaw } from '../../test/support/amqp';
import { calculatorMethods } from '../../services/calculator/src/methods';
import { startBroker } from '../src';
import { parseMetrics, postRpc, startFixture, type Fixture } from './support';

const td = new Teardown();
afterAll(() => td.run());

type Doc = { methods: { name: string }[] };

async function listTools(url: string): Promise<string[]> {
  const client = new Client({ name: 'discovery-test', version: '0.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`)));
  try {
    return (await client.listTools()).tools.map((t) => t.name).sort();
  } finally {
    await client.close();
  }
}

describe('announcements that do not fit', () => {
  const ns = new TestNamespace();
  let f: Fixture;
  beforeAll(async () => {
    td.add(() => ns.destroy());
    f = await startFixture(ns, td);
  });

  const base = { v: 1, type: 'announce', startedAt: Date.now(), intervalMs: 60_000, methods: [], notifications: [] };
  // The shapes that were accepted before, and from then on made rpc.discover answer -32603 to everyone.
  const malformed: [string, Record<string, unknown>][] = [
    ['methods as strings', { methods: ['add', 'evil'] }],
    ['a method without a name', { methods: [{ description: 'nameless' }] }],
    ['a method whose name is an object', { methods: [{ name: { toString: 'x' } }] }],
    ['notifications as objects without names', { notifications: [{}] }],
    ['a params schema that is not a schema', { methods: [{ name: 'broken', params: { type: 42 } }] }],
    ['a tool whose input schema is a number', { methods: [{ name: 'broken2', tool: { description: 'x', inputSchema: 7 } }] }],
    ['metadata that is not strings', { metadata: { version: { major: 1 } } }],
    ['instances that are null', { instanceNotifications: null }],
    ['no protocol version', { v: undefined }],
  ];

  it('drops each one whole, and rpc.discover, /services, MCP tools/list and /metrics keep working', async () => {
    for (const [i, [, fields]] of malformed.entries()) {
      await publishRaw(ns.names.controlExchange, '', Buffer.from(JSON.stringify({ ...base, service: ns.service(`bad-${i}`), instanceId: `bad-${i}`, ...fields })));
    }
    await publishRaw(ns.names.controlExchange, '', Buffer.from('{"type":"announce"'));
    // A good one last: the registry's queue keeps order, so once it is in, every bad one has been seen.
    await publishRaw(ns.names.controlExchange, '', Buffer.from(JSON.stringify({ ...base, service: ns.service('good'), instanceId: 'good-1', methods: [{ name: 'marker' }] })));
    await waitFor(() => f.broker.gateway.catalogue.current().methods.has('marker'), { message: 'the good announcement heard' });

    const discover = (await (await postRpc(f.url, '{"jsonrpc":"2.0","method":"rpc.discover","id":1}')).json()) as { result?: Doc; error?: unknown };
    expect(discover.error).toBeUndefined();
    expect(discover.result?.methods.map((m) => m.name)).toEqual(['add', 'calculate', 'dlq.list', 'dlq.purge', 'dlq.replay', 'dlq.show', 'fail', 'get_data', 'marker', 'sleep', 'subtract', 'sum', 'workers.cancelAll', 'workers.drain', 'workers.pause', 'workers.resume']);
    const client = await connectClient({ urls: amqpUrl(), namespace: ns.namespace, defaultTimeoutMs: 5000 });
    td.add(() => client.close());
    expect(((await client.call('rpc.discover')) as Doc).methods).toHaveLength(16);

    const services = await fetch(`${f.url}/services`);
    expect(services.status).toBe(200);
    const names = ((await services.json()) as { services: { name: string }[] }).services.map((s) => s.name);
    expect(names.some((n) => n.startsWith('bad-'))).toBe(false);
    expect(names).toContain(ns.service('good'));

    expect(await listTools(f.url)).toEqual(['calculate']);

    const metrics = await fetch(`${f.url}/metrics`);
    expect(metrics.status).toBe(200);
    expect(parseMetrics(await metrics.text()).samples.get('warren_registry_dropped_announcements_total')).toBe(malformed.length + 1);
    expect(f.broker.registry.dropped).toBe(malformed.length + 1);
    expect(await (await postRpc(f.url, '{"jsonrpc":"2.0","method":"add","params":[1,2],"id":2}')).json()).toEqual({ jsonrpc: '2.0', result: 3, id: 2 });
  });
});

describe('discovery at start', () => {
  const ns = new TestNamespace();

  it('knows every service that was running before it started as soon as /readyz says ready', async () => {
    td.add(() => ns.destroy());
    const urls = amqpUrl();
    // An hour between announcements: the only way the broker can hear of these is by asking.
    const common = { urls, namespace: ns.namespace, announceIntervalMs: 3_600_000 };
    for (const name of ['calculator', 'calculator', 'other']) {
      const s = await startService({ ...common, name: ns.service(name), methods: name === 'other' ? { ping: { handler: () => 'pong' } } : calculatorMethods });
      td.add(() => s.close());
    }
    const broker = await startBroker({ urls, namespace: ns.namespace, serviceName: ns.service('warren-broker'), port: 0, defaultMetrics: false, announceIntervalMs: 3_600_000 });
    td.add(() => broker.close());
    const url = await broker.listen();

    let ready: { dependencies: { name: string; ok: boolean; state: string }[] } | undefined;
    await waitFor(async () => {
      const res = await fetch(`${url}/readyz`);
      if (res.status === 200) ready = (await res.json()) as typeof ready;
      return ready !== undefined;
    }, { message: '/readyz ready', intervalMs: 20 });
    expect(ready?.dependencies).toContainEqual({ name: 'discovery', required: true, ok: true, state: 'complete' });

    // At once: no waiting for the services' next announcement (an hour away).
    const services = ((await (await fetch(`${url}/services`)).json()) as { services: { name: string; instances: unknown[] }[] }).services;
    expect(Object.fromEntries(services.map((s) => [s.name, s.instances.length]))).toEqual({ [ns.service('calculator')]: 2, [ns.service('other')]: 1, [ns.service('warren-broker')]: 1 });
    const doc = (await (await postRpc(url, '{"jsonrpc":"2.0","method":"rpc.discover","id":1}')).json()) as { result: Doc };
    expect(doc.result.methods.map((m) => m.name)).toEqual(['add', 'average', 'calculate', 'dlq.list', 'dlq.purge', 'dlq.replay', 'dlq.show', 'get_data', 'ping', 'subtract', 'sum', 'workers.cancelAll', 'workers.drain', 'workers.pause', 'workers.resume']);
    expect(await listTools(url)).toEqual(['calculate']);

    // The first calls are counted under their method, not as "(unknown)".
    expect(await (await postRpc(url, '{"jsonrpc":"2.0","method":"add","params":[4,5],"id":2}')).json()).toEqual({ jsonrpc: '2.0', result: 9, id: 2 });
    const samples = parseMetrics(await (await fetch(`${url}/metrics`)).text()).samples;
    expect(samples.get('warren_gateway_calls_total{method="add",outcome="ok",via="http"}')).toBe(1);
    expect([...samples.keys()].some((k) => k.includes('(unknown)'))).toBe(false);
  });
});
