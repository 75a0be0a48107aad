// Job-style methods through the gateway over the real RabbitMQ (docs/protocol.md "Job-style calls may
// queue", docs/gateway-operators.md): POST /rpc publishes a call to a job-style method persistent
// (delivery_mode 2) and, with no worker running, leaves it waiting in the queue instead of answering
// -32002; the worker started later answers it. A method that is not job-style still fails -32002 at once.
import amqp from 'amqplib';
import { startService, type ServiceMethod } from '@warren/amqp';
import { ErrorCode } from '@warren/jsonrpc';
import { Teardown, amqpUrl, waitFor } from '@warren/testkit';
import { TestNamespace } from '../../test/support/amqp';
import { startBroker, type Broker } from '../src';
import { postRpc } from './support';

const td = new Teardown();
afterAll(() => td.run());
const ns = new TestNamespace();
const urls = amqpUrl();
const service = ns.service('job-work');
const methods: Record<string, ServiceMethod> = {
  'jw.render': { jobStyle: true, handler: (p) => `rendered ${(p as [string])[0]}` },
  'jw.quick': { handler: () => 'quick' },
};

let broker: Broker;
let url: string;

beforeAll(async () => {
  td.add(() => ns.destroy());
  broker = await startBroker({ urls, namespace: ns.namespace, serviceName: ns.service('warren-broker'), port: 0, defaultMetrics: false });
  td.add(() => broker.close());
  url = await broker.listen();
  // The worker announces its methods, then stops: the gateway must remember which are job-style.
  const first = await startService({ urls, namespace: ns.namespace, name: service, methods });
  await waitFor(() => broker.registry.list().some((i) => i.service === service), { message: 'worker announced' });
  await first.close();
  await waitFor(() => !broker.registry.list().some((i) => i.service === service), { message: 'worker withdrawn' });
});

interface Answer {
  readonly result?: unknown;
  readonly error?: { code: number };
}

async function rpc(method: string, params: unknown, id: number): Promise<Answer> {
  const res = await postRpc(url, JSON.stringify({ jsonrpc: '2.0', method, params, id }), { 'x-timeout-ms': '60000' });
  return (await res.json()) as Answer;
}

/** Takes the first message waiting in `queue` (basic.get), gives it back (requeue) and returns its properties. */
async function peek(queue: string): Promise<amqp.MessageProperties | undefined> {
  const model = await amqp.connect(urls);
  try {
    const ch = await model.createChannel();
    const msg = await ch.get(queue, { noAck: false });
    if (msg === false) return undefined;
    ch.nack(msg, false, true);
    await ch.close();
    return msg.properties;
  } finally {
    await model.close();
  }
}

describe('job-style methods through the gateway', () => {
  it('a non-job method with no worker answers -32002 at once', async () => {
    expect((await rpc('jw.quick', [], 1)).error?.code).toBe(ErrorCode.ServiceUnavailable);
  });

  it('a job-style call with no worker waits in the queue, persistent, and is answered once a worker starts', async () => {
    const answer = rpc('jw.render', ['q1'], 2);
    const queue = ns.names.serviceQueue(service);
    let props: amqp.MessageProperties | undefined;
    await waitFor(async () => (props = await peek(queue)) !== undefined, { message: 'the job waits in the queue' });
    expect(props?.deliveryMode).toBe(2);
    const worker = await startService({ urls, namespace: ns.namespace, name: service, methods });
    td.add(() => worker.close());
    expect(await answer).toMatchObject({ result: 'rendered q1', id: 2 });
  });
});
