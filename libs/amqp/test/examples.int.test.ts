import { connectClient, relayPayload, startService, type RpcClient, type WarrenService } from '@warren/amqp';
import { encodeResponse, type JsonValue } from '@warren/jsonrpc';
import { Teardown, amqpUrl, waitFor } from '@warren/testkit';
import { TestNamespace } from '../../../test/support/amqp';
import { asExampleShows, canonicalResponse, loadExamples } from '../../../test/support/examples';
import { exampleMethods, exampleNotifications } from '../../../test/support/example-methods';

const td = new Teardown();
const ns = new TestNamespace();
const received: string[] = [];
let client: RpcClient;

beforeAll(async () => {
  td.add(() => ns.destroy());
  const urls = amqpUrl();
  const methods: WarrenService[] = [];
  methods.push(await startService({ urls, namespace: ns.namespace, name: ns.service('examples'), methods: exampleMethods }));
  methods.push(await startService({ urls, namespace: ns.namespace, name: ns.service('example-events'), notifications: exampleNotifications((m) => received.push(m)) }));
  for (const s of methods) td.add(() => s.close());
  client = await connectClient({ urls, namespace: ns.namespace, defaultTimeoutMs: 5000 });
  td.add(() => client.close());
});
afterAll(() => td.run());

describe.each(['spec-examples.json', 'seed-examples.json'] as const)('%s: client → RabbitMQ → service', (file) => {
  const examples = loadExamples(file).filter((e) => !e.mcp);
  it.each(examples.map((e) => [e.name, e] as const))('%s', async (_name, example) => {
    const answer = await relayPayload(client, example.request);
    const text = answer === null ? null : encodeResponse(answer);
    expect(text === null ? 'null' : canonicalResponse(asExampleShows(JSON.parse(text) as JsonValue, example.response))).toBe(canonicalResponse(example.response));
  });
});

it('delivered every notification of the examples to the subscriber', async () => {
  // update, notify_hello ×2, notify_sum from the spec file; logMessage, notifyEvent from the seed file.
  await waitFor(() => received.length >= 6);
  expect([...received].sort()).toEqual(['logMessage', 'notifyEvent', 'notify_hello', 'notify_hello', 'notify_sum', 'update']);
});
