import { connectClient } from '@warren/amqp';
import { ErrorCode, type JsonValue } from '@warren/jsonrpc';
import { Teardown, amqpUrl, waitFor } from '@warren/testkit';
import Ajv from 'ajv';
import metaSchema from '@open-rpc/meta-schema';
import jsonSchemaMetaSchema from '@json-schema-tools/meta-schema';
import { TestNamespace } from '../../test/support/amqp';
import { canonicalResponse, expectExampleOverHttp, loadExamples } from '../../test/support/examples';
import { buildGateway } from '../src';
import { parseMetrics, postRpc, startFixture, type Fixture } from './support';

const td = new Teardown();
const ns = new TestNamespace();
let f: Fixture;

beforeAll(async () => {
  td.add(() => ns.destroy());
  f = await startFixture(ns, td, { maxTimeoutMs: 1000, defaultTimeoutMs: 1000 });
});
afterAll(() => td.run());

type ErrorBody = { jsonrpc: '2.0'; id: unknown; error: { code: number; message: string; data?: { reason?: string } } };

describe.each(['spec-examples.json', 'seed-examples.json'] as const)('%s over POST /rpc', (file) => {
  const examples = loadExamples(file).filter((e) => !e.mcp);
  it.each(examples.map((e) => [e.name, e] as const))('%s', (_name, example) => expectExampleOverHttp(f.url, example));
});

it('delivered the notifications of both files to their subscriber', async () => {
  await waitFor(() => f.notified.length >= 6);
  expect([...f.notified].sort()).toEqual(['logMessage', 'notifyEvent', 'notify_hello', 'notify_hello', 'notify_sum', 'update']);
});

describe('HTTP answers', () => {
  it('413 with a JSON-RPC error for a body over the limit (default 1 MiB)', async () => {
    const big = JSON.stringify({ jsonrpc: '2.0', method: 'sum', params: Array.from({ length: 600_000 }, () => 1), id: 1 });
    expect(big.length).toBeGreaterThan(1024 * 1024);
    const res = await postRpc(f.url, big);
    expect(res.status).toBe(413);
    const body = (await res.json()) as ErrorBody;
    expect(body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: ErrorCode.InvalidRequest, data: { reason: 'too_large' } } });
  });

  it('415 for a content type that is not JSON', async () => {
    const res = await fetch(`${f.url}/rpc`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: '{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}' });
    expect(res.status).toBe(415);
    expect(((await res.json()) as ErrorBody).error.data?.reason).toBe('unsupported_media_type');
  });

  it('415 for a body without a content type', async () => {
    const res = await fetch(`${f.url}/rpc`, { method: 'POST', body: new Uint8Array(Buffer.from('{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}')) });
    expect(res.status).toBe(415);
  });

  it('accepts application/json with a charset and application/json-rpc', async () => {
    for (const type of ['application/json; charset=utf-8', 'application/json-rpc']) {
      const res = await fetch(`${f.url}/rpc`, { method: 'POST', headers: { 'content-type': type }, body: '{"jsonrpc":"2.0","method":"add","params":[1,2],"id":7}' });
      expect(await res.json()).toEqual({ jsonrpc: '2.0', result: 3, id: 7 });
    }
  });

  it('answers -32700 with id null for broken JSON and an empty body', async () => {
    for (const body of ['{"jsonrpc": "2.0", "method"', '']) {
      const res = await postRpc(f.url, body);
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: ErrorCode.ParseError } });
    }
  });

  it('answers -32600 with id null for an invalid request', async () => {
    const res = await postRpc(f.url, '{"jsonrpc":"2.0","method":1,"params":"bar"}');
    expect(await res.json()).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: ErrorCode.InvalidRequest } });
  });

  it('keeps string and fractional ids as they came', async () => {
    const res = await postRpc(f.url, '[{"jsonrpc":"2.0","method":"add","params":[1,1],"id":"a-1"},{"jsonrpc":"2.0","method":"add","params":[2,2],"id":1.5}]');
    expect(canonicalResponse((await res.json()) as JsonValue)).toBe(canonicalResponse([{ jsonrpc: '2.0', result: 2, id: 'a-1' }, { jsonrpc: '2.0', result: 4, id: 1.5 }]));
  });
});

describe('deadlines', () => {
  it('X-Timeout-Ms sets the deadline of the call', async () => {
    const started = Date.now();
    const res = await postRpc(f.url, '{"jsonrpc":"2.0","method":"sleep","params":[3000],"id":1}', { 'x-timeout-ms': '150' });
    expect(await res.json()).toMatchObject({ id: 1, error: { code: ErrorCode.DeadlineExceeded } });
    expect(Date.now() - started).toBeLessThan(900);
  });

  it('is capped by the gateway maximum (1000 ms here)', async () => {
    const started = Date.now();
    const res = await postRpc(f.url, '{"jsonrpc":"2.0","method":"sleep","params":[5000],"id":2}', { 'x-timeout-ms': '600000' });
    expect(await res.json()).toMatchObject({ id: 2, error: { code: ErrorCode.DeadlineExceeded } });
    const took = Date.now() - started;
    expect(took).toBeGreaterThanOrEqual(900);
    expect(took).toBeLessThan(3000);
  });

  it('refuses a malformed X-Timeout-Ms with 400', async () => {
    const res = await postRpc(f.url, '{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}', { 'x-timeout-ms': 'soon' });
    expect(res.status).toBe(400);
    expect(((await res.json()) as ErrorBody).error.data?.reason).toBe('invalid_timeout_header');
  });
});

describe('concurrency limit', () => {
  it('answers Overloaded at once when the gateway is at its limit, instead of queueing', async () => {
    // A second gateway on the same client, with room for one call.
    const small = await buildGateway({ client: f.broker.client, connection: f.broker.connection, registry: f.broker.registry }, { port: 0, maxConcurrentCalls: 1, defaultMetrics: false });
    td.add(() => small.close());
    const url = await small.listen();
    const slow = postRpc(url, '{"jsonrpc":"2.0","method":"sleep","params":[500],"id":"slow"}');
    await waitFor(() => small.calls.size === 1);
    const started = Date.now();
    const refused = await postRpc(url, '[{"jsonrpc":"2.0","method":"add","params":[1,2],"id":"fast"},{"jsonrpc":"2.0","method":"logMessage","params":["x"]}]');
    expect(Date.now() - started).toBeLessThan(400);
    expect(refused.status).toBe(200);
    expect(await refused.json()).toEqual([{ jsonrpc: '2.0', id: 'fast', error: { code: ErrorCode.Overloaded, message: 'Overloaded', data: { reason: 'gateway_concurrency', limit: 1 } } }]);
    expect(await (await slow).json()).toEqual({ jsonrpc: '2.0', result: 'slept', id: 'slow' });
    const after = await postRpc(url, '{"jsonrpc":"2.0","method":"add","params":[1,2],"id":3}');
    expect(await after.json()).toEqual({ jsonrpc: '2.0', result: 3, id: 3 });
    const { samples } = parseMetrics(await (await fetch(`${url}/metrics`)).text());
    expect(samples.get('warren_gateway_calls_total{method="add",outcome="overloaded",via="http"}')).toBe(1);
  });
});

describe('rpc.discover', () => {
  const validate = (() => {
    // Both schemas name a meta-schema URL ajv does not know; their keywords are draft-07's, so it is dropped.
    // Formats (uri, email) are not what this test is about, and ajv 8 needs a plugin for them.
    const withoutMeta = (s: unknown): Record<string, unknown> => {
      const { $schema: _meta, $id: _id, ...rest } = s as Record<string, unknown>;
      return rest;
    };
    const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
    // The OpenRPC meta-schema refers to the JSON Schema meta-schema both with and without a trailing slash.
    for (const key of ['https://meta.json-schema.tools', 'https://meta.json-schema.tools/']) ajv.addSchema(withoutMeta(jsonSchemaMetaSchema), key);
    return ajv.compile(withoutMeta(metaSchema));
  })();

  function check(doc: unknown): void {
    if (!validate(doc)) throw new Error(`not a valid OpenRPC document: ${JSON.stringify(validate.errors, null, 2)}`);
    const methods = (doc as { methods: { name: string; 'x-warren-service': string; paramStructure: string; params: { name: string; required: boolean }[] }[] }).methods;
    expect(methods.map((m) => m.name)).toEqual(['add', 'calculate', 'dlq.list', 'dlq.purge', 'dlq.replay', 'dlq.show', 'fail', 'get_data', 'sleep', 'subtract', 'sum', 'workers.cancelAll', 'workers.drain', 'workers.pause', 'workers.resume']);
    const calc = methods.find((m) => m.name === 'calculate');
    expect(calc).toMatchObject({ 'x-warren-service': ns.service('calculator'), paramStructure: 'by-name', params: [{ name: 'expression', required: true }] });
    expect(methods.find((m) => m.name === 'add')).toMatchObject({ paramStructure: 'by-position', params: [{ name: 'arg0' }, { name: 'arg1' }] });
  }

  it('answers a valid, merged OpenRPC document over HTTP', async () => {
    const res = await postRpc(f.url, '{"jsonrpc":"2.0","method":"rpc.discover","id":1}');
    const body = (await res.json()) as { result: unknown; id: number };
    expect(body.id).toBe(1);
    check(body.result);
  });

  it('answers the same over RabbitMQ', async () => {
    const client = await connectClient({ urls: amqpUrl(), namespace: ns.namespace, defaultTimeoutMs: 5000 });
    td.add(() => client.close());
    check(await client.call('rpc.discover'));
  });
});

describe('operator endpoints', () => {
  it('GET /healthz', async () => {
    const res = await fetch(`${f.url}/healthz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ status: 'ok' });
  });

  it('GET /readyz reports RabbitMQ', async () => {
    const res = await fetch(`${f.url}/readyz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ status: 'ready', mode: 'rabbitmq', rabbitmq: { ok: true, state: 'open' }, dependencies: [{ name: 'discovery', required: true, ok: true, state: 'complete' }] });
  });

  it('GET /services lists the live services, their instances, methods and tools', async () => {
    const body = (await (await fetch(`${f.url}/services`)).json()) as { mode: string; services: { name: string; instances: unknown[]; methods: { name: string; tool?: string }[]; notifications: string[] }[] };
    expect(body.mode).toBe('rabbitmq');
    const byName = new Map(body.services.map((s) => [s.name, s]));
    expect(byName.get(ns.service('calculator'))).toMatchObject({ instances: [expect.objectContaining({ instanceId: expect.any(String) })], methods: [{ name: 'calculate', tool: 'calculate' }] });
    expect(byName.get(ns.service('examples'))?.methods.map((m) => m.name).sort()).toEqual(['add', 'fail', 'get_data', 'sleep', 'subtract', 'sum']);
    expect(byName.get(ns.service('example-events'))?.notifications).toEqual(['logMessage', 'notifyEvent', 'notify_hello', 'notify_sum', 'update']);
    expect(byName.has(ns.service('warren-broker'))).toBe(true);
  });

  it('GET /inflight answers a note and the gateway\'s own calls when no store is configured', async () => {
    const slow = postRpc(f.url, '{"jsonrpc":"2.0","method":"sleep","params":[300],"id":"watch-me"}');
    await waitFor(() => f.broker.gateway.calls.size === 1);
    const body = (await (await fetch(`${f.url}/inflight`)).json()) as { configured: boolean; note: string; calls: unknown[]; gateway: { method: string; id: unknown; callId: string }[] };
    expect(body).toMatchObject({ configured: false, calls: [], gateway: [{ method: 'sleep', id: 'watch-me', via: 'http' }] });
    expect(body.note).toEqual(expect.any(String));
    await slow;
  });

  it('GET /metrics: calls by method and outcome, latency, in-flight, reconnects, late replies', async () => {
    await postRpc(f.url, '[{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1},{"jsonrpc":"2.0","method":"subtract","params":[5,2],"id":2},{"jsonrpc":"2.0","method":"fail","id":3}]');
    await postRpc(f.url, '{"jsonrpc":"2.0","method":"no_such_method_xyz","id":1}');
    await postRpc(f.url, '{"jsonrpc":"2.0","method":"sleep","params":[1000],"id":1}', { 'x-timeout-ms': '50' });
    const res = await fetch(`${f.url}/metrics`);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    const { samples, types } = parseMetrics(await res.text());
    expect(samples.get('warren_gateway_calls_total{method="add",outcome="ok",via="http"}')).toBeGreaterThanOrEqual(1);
    expect(samples.get('warren_gateway_calls_total{method="subtract",outcome="ok",via="http"}')).toBeGreaterThanOrEqual(1);
    expect(samples.get('warren_gateway_calls_total{method="sleep",outcome="deadline_exceeded",via="http"}')).toBeGreaterThanOrEqual(1);
    expect(samples.get('warren_gateway_calls_total{method="fail",outcome="invalid_params",via="http"}')).toBeGreaterThanOrEqual(1);
    // Method names nobody announced collapse into one label value.
    expect(samples.get('warren_gateway_calls_total{method="(unknown)",outcome="method_not_found",via="http"}')).toBeGreaterThanOrEqual(1);
    expect([...samples.keys()].some((k) => k.includes('no_such_method_xyz'))).toBe(false);
    expect(types.get('warren_gateway_call_duration_seconds')).toBe('histogram');
    expect(samples.get('warren_gateway_call_duration_seconds_count{method="add",via="http"}')).toBeGreaterThanOrEqual(1);
    expect(samples.get('warren_gateway_calls_in_flight{via="http"}')).toBe(0);
    expect(types.get('warren_amqp_reconnects_total')).toBe('counter');
    expect(samples.get('warren_amqp_reconnects_total')).toBe(0);
    expect(types.get('warren_rpc_late_replies_total')).toBe('counter');
    expect(samples.get('warren_rpc_late_replies_total')).toEqual(expect.any(Number));
    expect(samples.get('warren_mcp_sessions{transport="sse"}')).toBe(0);
    // One series per service now (issue 31): their sum is every live instance.
    const instances = [...samples].filter(([k]) => k.startsWith('warren_registry_instances{service=')).reduce((a, [, v]) => a + v, 0);
    expect(instances).toBeGreaterThanOrEqual(4);
  });

  it('answers 404 for an unknown route', async () => {
    expect((await fetch(`${f.url}/nope`)).status).toBe(404);
  });
});
