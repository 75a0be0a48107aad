// The client refills one header object for every publish (see PublishHeaders in client.ts). That is
// only sound while amqplib encodes the headers before `publish` returns; these tests fail if an
// amqplib upgrade ever defers the encoding, and check that concurrent calls never mix headers.
import amqp, { type ConsumeMessage } from 'amqplib';
import { connectClient, startService, type RpcClient } from '@warren/amqp';
import { Teardown, amqpUrl, waitFor } from '@warren/testkit';
import { TestNamespace } from '../../../test/support/amqp';

const td = new Teardown();
afterAll(() => td.run());

it('amqplib has encoded the headers when publish returns: changing the object afterwards changes nothing sent', async () => {
  const conn = await amqp.connect(amqpUrl(), { noDelay: true });
  td.add(() => conn.close());
  const ch = await conn.createChannel();
  const { queue } = await ch.assertQueue('', { exclusive: true });
  const received: ConsumeMessage[] = [];
  await ch.consume(queue, (msg) => msg && received.push(msg), { noAck: true });

  const headers: Record<string, unknown> = {};
  for (let i = 0; i < 20; i++) {
    headers['x-n'] = i;
    headers['traceparent'] = `value-${i}`;
    ch.sendToQueue(queue, Buffer.from(String(i)), { headers });
  }
  headers['x-n'] = -1;
  headers['traceparent'] = 'changed after the last publish';

  await waitFor(() => received.length === 20, { message: 'twenty messages back' });
  expect(received.map((m) => [m.content.toString(), m.properties.headers?.['x-n'], m.properties.headers?.['traceparent']])).toEqual(
    Array.from({ length: 20 }, (_, i) => [String(i), i, `value-${i}`]),
  );
});

it('concurrent calls each carry their own deadline and trace context', async () => {
  const ns = new TestNamespace();
  td.add(() => ns.destroy());
  const service = await startService({
    urls: amqpUrl(),
    namespace: ns.namespace,
    name: ns.service('echo-headers'),
    methods: { echo: { handler: (_params, ctx) => ({ trace: ctx.traceparent.split('-')[1] ?? '', deadline: ctx.deadline }) } },
  });
  td.add(() => service.close());
  const client: RpcClient = await connectClient({ urls: amqpUrl(), namespace: ns.namespace });
  td.add(() => client.close());

  const calls = Array.from({ length: 100 }, (_, i) => {
    const trace = i.toString(16).padStart(32, 'a');
    const started = Date.now();
    const timeoutMs = 5_000 + i * 100;
    return client
      .call<{ trace: string; deadline: number }>('echo', [], { timeoutMs, traceparent: `00-${trace}-00f067aa0ba902b7-01` })
      .then((answer) => ({ i, answer, trace, earliest: started + timeoutMs, latest: Date.now() + timeoutMs }));
  });
  for (const { answer, trace, earliest, latest } of await Promise.all(calls)) {
    expect(answer.trace).toBe(trace);
    expect(answer.deadline).toBeGreaterThanOrEqual(earliest);
    expect(answer.deadline).toBeLessThanOrEqual(latest);
  }
});
