// The JSON-RPC examples the project is judged by (shared/jsonrpc), run against
// the real example services — calculator and audit, each its own process from
// its main.ts — over RabbitMQ, as the gateway relays them. The MCP examples go
// through the gateway's tool-result rule (broker/src/mcp/tool-result.ts), which
// is the contract between the `calculate` method and tools/call.
import { connectClient, relayPayload, type RpcClient } from '@warren/amqp';
import { encodeResponse, requestMessage, type JsonValue } from '@warren/jsonrpc';
import { Teardown, amqpUrl, waitFor } from '@warren/testkit';
import { toolResult } from '../../broker/src/mcp/tool-result';
import { TestNamespace } from '../support/amqp';
import { asExampleShows, canonicalResponse, loadExamples } from '../support/examples';
import { deleteRedisKeys, startServiceProcess } from './helpers';

const td = new Teardown();
const ns = new TestNamespace();
let client: RpcClient;

beforeAll(async () => {
  td.add(() => ns.destroy());
  td.add(() => deleteRedisKeys(`${ns.namespace}:`));
  ns.service('calculator');
  ns.service('audit');
  await Promise.all([
    startServiceProcess(td, 'calculator', { WARREN_NAMESPACE: ns.namespace }),
    startServiceProcess(td, 'audit', { WARREN_NAMESPACE: ns.namespace, AUDIT_TTL_MS: '600000' }),
  ]);
  client = await connectClient({ urls: amqpUrl(), namespace: ns.namespace, defaultTimeoutMs: 5000 });
  td.add(() => client.close());
}, 60_000);
afterAll(() => td.run());

describe.each(['spec-examples.json', 'seed-examples.json'] as const)('%s against the example services', (file) => {
  const examples = loadExamples(file).filter((e) => !e.mcp);
  it.each(examples.map((e) => [e.name, e] as const))('%s', async (_name, example) => {
    const answer = await relayPayload(client, example.request);
    const text = answer === null ? null : encodeResponse(answer);
    expect(text === null ? 'null' : canonicalResponse(asExampleShows(JSON.parse(text) as JsonValue, example.response))).toBe(canonicalResponse(example.response));
  });
});

describe('MCP examples: calculate through the gateway tool-result rule', () => {
  const examples = loadExamples('seed-examples.json').filter((e) => e.mcp);
  it.each(examples.map((e) => [e.name, e] as const))('%s', async (_name, example) => {
    const request = JSON.parse(example.request) as { id: number; params: { name: string; arguments: Record<string, JsonValue> } };
    const response = await client.request(requestMessage(request.params.name, request.params.arguments, request.id));
    const result = toolResult(request.params.name, response);
    if (example.response !== undefined) {
      expect({ jsonrpc: '2.0', id: request.id, result }).toEqual(example.response);
    } else {
      // "result.isError is true and result.content[0].text starts with 'Error executing tool calculate: '"
      expect(result.isError).toBe(true);
      expect(result.content[0]?.text).toMatch(/^Error executing tool calculate: \S/);
    }
  });
});

it('the audit service recorded every notification of the examples', async () => {
  const recorded = async (): Promise<string[]> => (await client.call<{ method: string }[]>('audit.recent', { limit: 100 })).map((e) => e.method).sort();
  // update, notify_hello ×2, notify_sum from the spec file; logMessage, notifyEvent from the seed file.
  await waitFor(async () => (await recorded()).length >= 6);
  expect(await recorded()).toEqual(['logMessage', 'notifyEvent', 'notify_hello', 'notify_hello', 'notify_sum', 'update']);
});
