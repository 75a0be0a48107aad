// A tools/call carrying _meta.progressToken hears the worker's ctx.progress as MCP
// notifications/progress, over both SSE and Streamable HTTP (the SDK client's `onprogress`); a
// call without a token gets none and still answers.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { ServiceMethod } from '@warren/amqp';
import { Teardown } from '@warren/testkit';
import { TestNamespace } from '../../test/support/amqp';
import { startFixture, type Fixture } from './support';

const td = new Teardown();
const ns = new TestNamespace();
let f: Fixture;

const render: ServiceMethod = {
  tool: { name: 'render_steps', description: 'Reports progress over a few steps.' },
  params: { type: 'object', properties: { steps: { type: 'integer', minimum: 1, maximum: 10 } }, required: ['steps'] },
  handler: async (params, ctx) => {
    const { steps } = params as { steps: number };
    // Each step waits for the previous report to be written (the throttle's interval), so every one is sent.
    for (let i = 1; i <= steps; i++) {
      ctx.progress(i / steps, `step ${i}`);
      if (i < steps) await new Promise((resolve) => setTimeout(resolve, 300));
    }
    return { steps };
  },
};

beforeAll(async () => {
  td.add(() => ns.destroy());
  f = await startFixture(ns, td, {}, { render_steps: render });
});
afterAll(() => td.run());

const transports: [string, () => Transport][] = [
  ['SSE', () => new SSEClientTransport(new URL(`${f.url}/sse`))],
  ['Streamable HTTP', () => new StreamableHTTPClientTransport(new URL(`${f.url}/mcp`))],
];

describe.each(transports)('over %s', (_name, transport) => {
  it('sends notifications/progress for a call with a progressToken, in order, ending at 100', async () => {
    const client = new Client({ name: 'warren-test', version: '0.0.0' });
    await client.connect(transport());
    try {
      const seen: { progress: number; total?: number | undefined; message?: string | undefined }[] = [];
      const result = await client.callTool({ name: 'render_steps', arguments: { steps: 3 } }, undefined, { onprogress: (p) => seen.push(p) });
      expect(result.isError).toBeFalsy();
      expect(seen.map((p) => p.message)).toEqual(['step 1', 'step 2', 'step 3']);
      expect(seen.map((p) => p.progress)).toEqual([33.3, 66.7, 100]);
      expect(seen.every((p) => p.total === 100)).toBe(true);

      // Without a token: the same call, no notifications, the same answer.
      const plain = await client.callTool({ name: 'render_steps', arguments: { steps: 1 } });
      expect(plain.isError).toBeFalsy();
    } finally {
      await client.close();
    }
  });
});
