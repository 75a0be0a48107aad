import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode } from '@warren/jsonrpc';
import { Teardown, waitFor } from '@warren/testkit';
import { TestNamespace } from '../../test/support/amqp';
import { postRpc, startFixture, type Fixture } from './support';

const td = new Teardown();
const ns = new TestNamespace();
const token = 'test-token-0123456789';
let reached = 0;
let f: Fixture;

beforeAll(async () => {
  td.add(() => ns.destroy());
  f = await startFixture(ns, td, { tokens: ['other-token', token], allowMethods: ['count', 'add', 'sleep', 'calc*', 'rpc.discover'] }, {
    count: { handler: () => ++reached },
  });
});
afterAll(() => td.run());

const call = '{"jsonrpc":"2.0","method":"count","id":1}';

describe('bearer-token auth', () => {
  it('answers 401 without a token, and nothing reaches RabbitMQ', async () => {
    const res = await postRpc(f.url, call);
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect(await res.json()).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: ErrorCode.Unauthorized } });
    expect(f.broker.client.stats().pending).toBe(0);
    expect(reached).toBe(0);
  });

  it('answers 401 for a wrong token or another scheme', async () => {
    for (const authorization of ['Bearer nope', `Basic ${token}`, `Bearer ${token}x`, 'Bearer']) {
      expect((await postRpc(f.url, call, { authorization })).status).toBe(401);
    }
    expect(reached).toBe(0);
  });

  it('relays the call with a valid token (any of the configured ones)', async () => {
    expect(await (await postRpc(f.url, call, { authorization: `Bearer ${token}` })).json()).toEqual({ jsonrpc: '2.0', result: 1, id: 1 });
    expect(await (await postRpc(f.url, call, { authorization: 'bearer other-token' })).json()).toEqual({ jsonrpc: '2.0', result: 2, id: 1 });
  });

  it('leaves the probes and /metrics open, and guards /services and /inflight', async () => {
    for (const path of ['/healthz', '/readyz', '/metrics']) expect((await fetch(`${f.url}${path}`)).status).toBe(200);
    for (const path of ['/services', '/inflight']) {
      expect((await fetch(`${f.url}${path}`)).status).toBe(401);
      expect((await fetch(`${f.url}${path}`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
    }
  });

  it('guards the MCP endpoints', async () => {
    expect((await fetch(`${f.url}/sse`)).status).toBe(401);
    expect((await fetch(`${f.url}/messages/?session_id=x`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).status).toBe(401);
    expect((await fetch(`${f.url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).status).toBe(401);
  });

  it.each([
    ['SSE', (): SSEClientTransport => new SSEClientTransport(new URL(`${f.url}/sse`), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
      eventSourceInit: { fetch: (url, init) => fetch(url, { ...init, headers: { ...(init?.headers as Record<string, string>), authorization: `Bearer ${token}` } }) },
    })],
    ['Streamable HTTP', (): StreamableHTTPClientTransport => new StreamableHTTPClientTransport(new URL(`${f.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } })],
  ] as const)('lets an MCP client with a token in over %s', async (_name, transport) => {
    const client = new Client({ name: 'warren-test', version: '0.0.0' });
    await client.connect(transport());
    try {
      const result = await client.callTool({ name: 'calculate', arguments: { expression: '2*21' } });
      expect(result.structuredContent).toEqual({ result: '42' });
    } finally {
      await client.close();
    }
  });
});

describe('method allow-list', () => {
  const auth = { authorization: `Bearer ${token}` };

  it('relays allowed methods (exact names and prefixes)', async () => {
    const res = await postRpc(f.url, '[{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1},{"jsonrpc":"2.0","method":"calculate","params":{"expression":"6*7"},"id":2}]', auth);
    expect(await res.json()).toEqual(expect.arrayContaining([{ jsonrpc: '2.0', result: 3, id: 1 }, { jsonrpc: '2.0', result: '42', id: 2 }]));
  });

  it('answers Method not found for a method off the list, without relaying it', async () => {
    const res = await postRpc(f.url, '{"jsonrpc":"2.0","method":"subtract","params":[5,3],"id":9}', auth);
    expect(await res.json()).toEqual({ jsonrpc: '2.0', error: { code: ErrorCode.MethodNotFound, message: 'Method not found' }, id: 9 });
  });

  it('lists and calls only allowed tools over MCP', async () => {
    const client = new Client({ name: 'warren-test', version: '0.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${f.url}/mcp`), { requestInit: { headers: auth } }));
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['calculate']);
    } finally {
      await client.close();
    }
  });
});

describe('shutdown', () => {
  it('finishes an in-flight HTTP call, then refuses new connections', async () => {
    const inFlight = postRpc(f.url, '{"jsonrpc":"2.0","method":"sleep","params":[300],"id":"last"}', { authorization: `Bearer ${token}` });
    await waitFor(() => f.broker.gateway.calls.size === 1, { message: 'call on its way' });
    const closed = f.broker.close();
    expect(await (await inFlight).json()).toEqual({ jsonrpc: '2.0', result: 'slept', id: 'last' });
    await closed;
    await expect(postRpc(f.url, call, { authorization: `Bearer ${token}` })).rejects.toThrow();
  });
});
