import { Dispatcher, decode, encodeResponse, type JsonValue } from '@warren/jsonrpc';
import { canonicalResponse, loadExamples } from '../../../test/support/examples';
import { exampleMethods, exampleNotifications } from '../../../test/support/example-methods';

function makeDispatcher(received: string[]): Dispatcher<void> {
  const d = new Dispatcher<void>();
  for (const [name, def] of Object.entries(exampleMethods)) d.method(name, def);
  for (const [name, def] of Object.entries(exampleNotifications((m) => received.push(m)))) d.notification(name, def);
  return d;
}

describe.each(['spec-examples.json', 'seed-examples.json'] as const)('%s through the dispatcher', (file) => {
  const examples = loadExamples(file).filter((e) => !e.mcp);
  it.each(examples.map((e) => [e.name, e] as const))('%s', async (_name, example) => {
    const received: string[] = [];
    const answer = await makeDispatcher(received).handle(decode(example.request), () => undefined);
    const text = answer === null ? null : encodeResponse(answer);
    expect(text === null ? 'null' : canonicalResponse(JSON.parse(text) as JsonValue)).toBe(canonicalResponse(example.response));
  });
});

it('runs the notifications of the examples, though it answers none of them', async () => {
  const received: string[] = [];
  const d = makeDispatcher(received);
  for (const e of loadExamples('spec-examples.json')) await d.handle(decode(e.request), () => undefined);
  expect(received.sort()).toEqual(['notify_hello', 'notify_hello', 'notify_sum', 'update']);
});
