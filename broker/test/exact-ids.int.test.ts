// JSON-RPC ids echoed byte for byte through the gateway: POST /rpc (relayed
// over AMQP to a service and back), MCP over SSE, and MCP over Streamable HTTP
// (whose answers the SDK writes: the ids are rewritten in its bytes).
import { Teardown } from '@warren/testkit';
import { TestNamespace } from '../../test/support/amqp';
import { SseReader, postRpc, startFixture, type Fixture } from './support';

const td = new Teardown();
const ns = new TestNamespace();
let f: Fixture;

beforeAll(async () => {
  td.add(() => ns.destroy());
  f = await startFixture(ns, td);
});
afterAll(() => td.run());

const ids = ['9007199254740993', '-9007199254740993', '1.0', '0.10000000000000000000001', '1e2'];

describe('POST /rpc', () => {
  it.each(ids)('echoes id %s exactly', async (id) => {
    const res = await postRpc(f.url, `{"jsonrpc":"2.0","method":"add","params":[1,2],"id":${id}}`);
    const text = await res.text();
    expect(text).toContain(`"id":${id}`);
    expect(JSON.parse(text)).toMatchObject({ result: 3 });
  });

  it('echoes each id of a batch exactly, errors included', async () => {
    const res = await postRpc(f.url, '[{"jsonrpc":"2.0","method":"add","params":[1,2],"id":9007199254740993},{"jsonrpc":"2.0","method":"no.such","id":1.0},{"jsonrpc":"1.0","method":"add","id":2.50}]');
    const text = await res.text();
    for (const id of ['9007199254740993', '1.0', '2.50']) expect(text).toContain(`"id":${id}`);
  });
});

describe('MCP over SSE', () => {
  it('echoes a request id beyond 2^53 exactly', async () => {
    const abort = new AbortController();
    const res = await fetch(`${f.url}/sse`, { headers: { accept: 'text/event-stream' }, signal: abort.signal });
    const reader = new SseReader(res);
    try {
      const endpoint = `${f.url}${(await reader.next()).data}`;
      const post = (body: string): Promise<Response> => fetch(endpoint, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      await post('{"jsonrpc":"2.0","id":9007199254740993,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}');
      const init = await reader.next();
      expect(init.data).toContain('"id":9007199254740993');
      await post('{"jsonrpc":"2.0","method":"notifications/initialized"}');
      await post('{"jsonrpc":"2.0","id":1.0,"method":"tools/list"}');
      expect((await reader.next()).data).toContain('"id":1.0');
    } finally {
      await reader.cancel();
      abort.abort();
    }
  });
});

describe('MCP over Streamable HTTP', () => {
  const accept = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  const init = (id: string): string => `{"jsonrpc":"2.0","id":${id},"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`;

  /** Opens a session (initialize answered, initialized sent); returns its id. */
  async function session(): Promise<string> {
    const res = await fetch(`${f.url}/mcp`, { method: 'POST', headers: accept, body: init('1') });
    expect(res.status).toBe(200);
    await res.text();
    const id = res.headers.get('mcp-session-id') ?? '';
    const ack = await fetch(`${f.url}/mcp`, { method: 'POST', headers: { ...accept, 'mcp-session-id': id }, body: '{"jsonrpc":"2.0","method":"notifications/initialized"}' });
    await ack.text();
    return id;
  }

  it.each(['9007199254740993', '1.0', '0.10000000000000000000001', '-9007199254740993', '1e2'])('answers initialize with id %s exactly (the SDK writes the answer: its bytes are rewritten at the edge)', async (id) => {
    const res = await fetch(`${f.url}/mcp`, { method: 'POST', headers: accept, body: init(id) });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toMatch(new RegExp(`"id":${id.replace(/[.+]/g, '\\$&')}[,}]`));
    expect(text).not.toContain('warren-raw-id');
  });

  it('answers tools/call with id 9007199254740993 exactly on its event stream, whichever type the client names first', async () => {
    const id = await session();
    const call = '{"jsonrpc":"2.0","id":9007199254740993,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}}';
    for (const acceptHeader of ['application/json, text/event-stream', 'text/event-stream, application/json']) {
      const res = await fetch(`${f.url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: acceptHeader, 'mcp-session-id': id }, body: call });
      expect(res.status).toBe(200);
      const text = await res.text();
      expect(text).toContain('"id":9007199254740993');
      expect(text).not.toContain('warren-raw-id');
    }
    // A batch with a long decimal and 1.0, each answered with its own text.
    const batch = await fetch(`${f.url}/mcp`, { method: 'POST', headers: { ...accept, 'mcp-session-id': id }, body: '[{"jsonrpc":"2.0","id":1.0,"method":"tools/list"},{"jsonrpc":"2.0","id":0.10000000000000000000001,"method":"ping"}]' });
    const text = await batch.text();
    expect(text).toContain('"id":1.0');
    expect(text).toContain('"id":0.10000000000000000000001');
  });

  it('leaves an ordinary id alone', async () => {
    const res = await fetch(`${f.url}/mcp`, { method: 'POST', headers: accept, body: init('7') });
    const text = await res.text();
    expect(text).toMatch(/"id":7[,}]/);
  });
});

describe('GET /services', () => {
  it("shows each service's request-queue depth as queue: { messages, consumers }", async () => {
    const body = (await (await fetch(`${f.url}/services`)).json()) as { services: { name: string; queue?: { messages: number; consumers: number } }[] };
    const examples = body.services.find((s) => s.name === 'examples');
    expect(examples?.queue).toMatchObject({ messages: 0, consumers: 1 });
    // A notification-only service declares a request queue too, which nobody consumes.
    expect(body.services.find((s) => s.name === 'example-events')?.queue).toMatchObject({ messages: 0, consumers: 0 });
  });
});
