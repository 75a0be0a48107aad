// exactIdOutput: the bytes the MCP SDK writes get a marked id's exact text back,
// for both of its response shapes: JSON (enableJsonResponse) and an event stream.
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { decode } from '@warren/jsonrpc';
import { exactIdOutput, hasMarkedId, toSdk } from '../src/mcp/raw-ids';

const init = (id: string): string => `{"jsonrpc":"2.0","id":${id},"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`;

async function serve(json: boolean): Promise<{ url: string; close(): Promise<void> }> {
  const http: HttpServer = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const decoded = decode(Buffer.concat(chunks));
      if (decoded.kind !== 'single' || decoded.item.kind === 'invalid') throw new Error('test body must be one valid message');
      const message = toSdk(decoded.item.message, true);
      if (hasMarkedId(message)) exactIdOutput(res);
      // A transport per request (stateless), as simple as the SDK allows.
      const transport = new StreamableHTTPServerTransport({ enableJsonResponse: json });
      const server = new Server({ name: 't', version: '0' }, { capabilities: {} });
      void server.connect(transport).then(() => transport.handleRequest(req, res, message));
    });
  });
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/`, close: () => new Promise((r) => http.close(() => r())) };
}

describe.each([true, false])('enableJsonResponse: %s', (json) => {
  let s: Awaited<ReturnType<typeof serve>>;
  beforeAll(async () => (s = await serve(json)));
  afterAll(() => s.close());

  it.each(['9007199254740993', '1.0', '0.10000000000000000000001', '1e2'])('answers id %s with its very text, as a well-formed response', async (id) => {
    const res = await fetch(s.url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: init(id) });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(json ? /application\/json/ : /text\/event-stream/);
    const text = await res.text();
    expect(text).toContain(`"id":${id}`);
    expect(text).not.toContain('warren-raw-id');
    const body = json ? text : (text.split('\n').find((l) => l.startsWith('data: ')) ?? '').slice(6);
    // The body is JSON the client can read (a Content-Length for the longer text would have cut it short).
    expect(decode(body)).toMatchObject({ kind: 'single', item: { kind: 'response' } });
  });

  it('leaves the Content-Length of an answer without a marked id', async () => {
    const res = await fetch(s.url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: init('7') });
    const text = await res.text();
    expect(text).toContain('"id":7');
    if (json) expect(res.headers.get('content-length')).toBe(String(Buffer.byteLength(text)));
  });
});
