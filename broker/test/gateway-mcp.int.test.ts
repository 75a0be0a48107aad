import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { startService } from '@warren/amqp';
import { Teardown, amqpUrl, waitFor } from '@warren/testkit';
import { TestNamespace } from '../../test/support/amqp';
import { loadExamples } from '../../test/support/examples';
import { SseReader, startFixture, type Fixture } from './support';

const td = new Teardown();
const ns = new TestNamespace();
let f: Fixture;

beforeAll(async () => {
  td.add(() => ns.destroy());
  f = await startFixture(ns, td);
});
afterAll(() => td.run());

/** An SSE session opened by hand, the way the design notes' curl does it. */
async function openSession(): Promise<{ endpoint: string; reader: SseReader; close: () => Promise<void> }> {
  const abort = new AbortController();
  const res = await fetch(`${f.url}/sse`, { headers: { accept: 'text/event-stream' }, signal: abort.signal });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
  const reader = new SseReader(res);
  const first = await reader.next();
  expect(first.event).toBe('endpoint');
  expect(first.data).toMatch(/^\/messages\/\?session_id=[0-9a-f-]{36}$/);
  return {
    endpoint: `${f.url}${first.data}`,
    reader,
    close: async () => {
      await reader.cancel();
      abort.abort();
    },
  };
}

function post(endpoint: string, body: string): Promise<Response> {
  return fetch(endpoint, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
}

async function initialize(endpoint: string, reader: SseReader): Promise<void> {
  const res = await post(endpoint, JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2024-11-05', capabilities: {}, clientInfo: { name: 'curl', version: '0' } } }));
  expect(res.status).toBe(202);
  const answer = await reader.next();
  expect(answer.event).toBe('message');
  expect(JSON.parse(answer.data)).toMatchObject({ jsonrpc: '2.0', id: 0, result: { protocolVersion: '2024-11-05', capabilities: { tools: {} }, serverInfo: { name: 'warren' } } });
  expect((await post(endpoint, '{"jsonrpc":"2.0","method":"notifications/initialized"}')).status).toBe(202);
}

describe('HTTP+SSE transport, by hand', () => {
  const examples = loadExamples('seed-examples.json').filter((e) => e.mcp);

  it('answers the seed examples exactly as the design notes show', async () => {
    expect(examples.length).toBe(2);
    const s = await openSession();
    try {
      await initialize(s.endpoint, s.reader);
      for (const example of examples) {
        const res = await post(s.endpoint, example.request);
        expect(res.status).toBe(202);
        const event = await s.reader.next();
        expect(event.event).toBe('message');
        const message = JSON.parse(event.data) as { id: number; result: { isError: boolean; content: { text: string }[] } };
        if (example.response !== undefined) {
          expect(message).toEqual(example.response);
          // Byte for byte as the design notes print it, key order included.
          expect(event.data).toBe(JSON.stringify(example.response));
        } else {
          // "result.isError is true and result.content[0].text starts with 'Error executing tool calculate: '"
          expect(message.id).toBe(2);
          expect(message.result.isError).toBe(true);
          expect(message.result.content[0]?.text).toMatch(/^Error executing tool calculate: /);
        }
      }
    } finally {
      await s.close();
    }
  });

  it('lists the tools with their input schema', async () => {
    const s = await openSession();
    try {
      await initialize(s.endpoint, s.reader);
      await post(s.endpoint, '{"jsonrpc":"2.0","id":5,"method":"tools/list"}');
      const list = JSON.parse((await s.reader.next()).data) as { result: { tools: unknown[] } };
      expect(list.result.tools).toEqual([
        {
          name: 'calculate',
          description: 'Evaluate an arithmetic expression with + - * / % and parentheses.',
          inputSchema: { type: 'object', properties: { expression: { type: 'string', description: 'e.g. 1+3+6' } }, required: ['expression'], additionalProperties: false },
        },
      ]);
    } finally {
      await s.close();
    }
  });

  it('answers 404 for an unknown session and 400 without one', async () => {
    const unknown = await post(`${f.url}/messages/?session_id=00000000-0000-0000-0000-000000000000`, '{"jsonrpc":"2.0","id":1,"method":"ping"}');
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ id: null, error: { data: { reason: 'session_not_found' } } });
    expect((await post(`${f.url}/messages/`, '{"jsonrpc":"2.0","id":1,"method":"ping"}')).status).toBe(400);
  });

  it('refuses a post that is not JSON-RPC with 400, and keeps the session', async () => {
    const s = await openSession();
    try {
      expect((await post(s.endpoint, '{"jsonrpc": "2.0",')).status).toBe(400);
      expect((await post(s.endpoint, '{"foo":1}')).status).toBe(400);
      await initialize(s.endpoint, s.reader);
    } finally {
      await s.close();
    }
  });

  it('cleans the session up when its stream closes; later posts answer 404', async () => {
    // Sessions of the tests before may still be closing.
    await waitFor(() => f.broker.gateway.sessions.counts().sse === 0, { message: 'earlier sessions closed' });
    const s = await openSession();
    try {
      await initialize(s.endpoint, s.reader);
      expect(f.broker.gateway.sessions.counts().sse).toBe(1);
    } finally {
      await s.close();
    }
    await waitFor(() => f.broker.gateway.sessions.counts().sse === 0, { message: 'session removed' });
    expect((await post(s.endpoint, '{"jsonrpc":"2.0","id":1,"method":"ping"}')).status).toBe(404);
  });
});

describe.each([
  ['SSE', (): Transport => new SSEClientTransport(new URL(`${f.url}/sse`))],
  ['Streamable HTTP', (): Transport => new StreamableHTTPClientTransport(new URL(`${f.url}/mcp`))],
] as const)('the MCP SDK client over %s', (_name, transport) => {
  let client: Client;

  beforeAll(async () => {
    client = new Client({ name: 'warren-test', version: '0.0.0' });
    await client.connect(transport());
  });
  afterAll(() => client.close());

  it('lists the tools', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(['calculate']);
    expect(tools[0]?.inputSchema).toMatchObject({ type: 'object', required: ['expression'] });
  });

  it('calls a tool', async () => {
    const result = await client.callTool({ name: 'calculate', arguments: { expression: '1+3+6' } });
    expect(result).toEqual({ content: [{ type: 'text', text: '10' }], structuredContent: { result: '10' }, isError: false });
  });

  it('reports a failing tool as isError', async () => {
    const result = await client.callTool({ name: 'calculate', arguments: { expression: '1/(' } });
    expect(result.isError).toBe(true);
    expect((result.content as { text: string }[])[0]?.text).toBe("Error executing tool calculate: Unexpected end of expression at position 3 (expected a number or '(')");
  });

  it('answers an unknown tool with a protocol error', async () => {
    await expect(client.callTool({ name: 'no_such_tool', arguments: {} })).rejects.toMatchObject({ code: -32602 });
  });
});

describe('Streamable HTTP sessions', () => {
  it('answers 404 for an unknown session id and 400 without one', async () => {
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const unknown = await fetch(`${f.url}/mcp`, { method: 'POST', headers: { ...headers, 'mcp-session-id': 'nope' }, body: '{"jsonrpc":"2.0","id":1,"method":"ping"}' });
    expect(unknown.status).toBe(404);
    const none = await fetch(`${f.url}/mcp`, { method: 'POST', headers, body: '{"jsonrpc":"2.0","id":1,"method":"ping"}' });
    expect(none.status).toBe(400);
  });

  it('ends a session on DELETE', async () => {
    const transport = new StreamableHTTPClientTransport(new URL(`${f.url}/mcp`));
    const client = new Client({ name: 'warren-test', version: '0.0.0' });
    await client.connect(transport);
    const id = transport.sessionId;
    expect(id).toEqual(expect.any(String));
    await waitFor(() => f.broker.gateway.sessions.counts().streamable >= 1);
    await transport.terminateSession();
    await client.close();
    const after = await fetch(`${f.url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': id ?? '' }, body: '{"jsonrpc":"2.0","id":1,"method":"ping"}' });
    expect(after.status).toBe(404);
  });
});

it('serves many concurrent sessions, each getting its own answers', async () => {
  const count = 25;
  const clients = await Promise.all(Array.from({ length: count }, async (_, i) => {
    const client = new Client({ name: `c${i}`, version: '0.0.0' });
    await client.connect(i % 2 === 0 ? new SSEClientTransport(new URL(`${f.url}/sse`)) : new StreamableHTTPClientTransport(new URL(`${f.url}/mcp`)));
    return client;
  }));
  try {
    const counts = f.broker.gateway.sessions.counts();
    expect(counts.sse + counts.streamable).toBeGreaterThanOrEqual(count);
    const results = await Promise.all(clients.map((c, i) => c.callTool({ name: 'calculate', arguments: { expression: `${i}*2+1` } })));
    expect(results.map((r) => (r.structuredContent as { result: string }).result)).toEqual(Array.from({ length: count }, (_, i) => String(i * 2 + 1)));
  } finally {
    await Promise.all(clients.map((c) => c.close()));
  }
  await waitFor(() => f.broker.gateway.sessions.counts().sse === 0, { message: 'SSE sessions closed with their streams' });
});

it('tells open sessions when the tools change, as services come and go', async () => {
  const client = new Client({ name: 'watcher', version: '0.0.0' });
  let changes = 0;
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    changes++;
  });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${f.url}/mcp`)));
  try {
    const echo = await startService({
      urls: amqpUrl(), namespace: ns.namespace, name: ns.service('echo'),
      methods: { echo: { params: { type: 'object', properties: { text: { type: 'string' } } }, tool: { description: 'Echoes text.' }, handler: (p) => (p as { text: string }).text } },
    });
    td.add(() => echo.close());
    await waitFor(() => changes >= 1, { message: 'tools/list_changed after a service with a tool started' });
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['calculate', 'echo']);
    expect(await client.callTool({ name: 'echo', arguments: { text: 'hi' } })).toEqual({ content: [{ type: 'text', text: 'hi' }], structuredContent: { result: 'hi' }, isError: false });
    await echo.close();
    await waitFor(() => changes >= 2, { message: 'tools/list_changed after it withdrew' });
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['calculate']);
  } finally {
    await client.close();
  }
});
