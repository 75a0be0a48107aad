// `warren call` of a job-style method without --persistent (docs/protocol.md "Job-style calls may
// queue"): with no worker running the call waits in the queue, published persistent (delivery_mode 2),
// and the worker started later answers it.
import amqp from 'amqplib';
import { startService, type ServiceMethod } from '@warren/amqp';
import { RedisDirectory } from '@warren/inflight';
import { Teardown, amqpUrl, redisUrl, waitFor } from '@warren/testkit';
import { TestNamespace } from '../../../test/support/amqp';
import { deleteRedisKeys, runCli } from '../../../test/integration/helpers';

const td = new Teardown();
const ns = new TestNamespace();
const urls = amqpUrl();
const service = ns.service('cli-jobs');
const methods: Record<string, ServiceMethod> = { 'cj.render': { jobStyle: true, handler: (p) => `rendered ${(p as [string])[0]}` } };
let directory: RedisDirectory;

beforeAll(async () => {
  td.add(() => ns.destroy());
  td.add(() => deleteRedisKeys(`${ns.namespace}:`));
  directory = new RedisDirectory({ redis: redisUrl(), keyPrefix: ns.namespace });
  td.add(() => directory.close());
  // The worker records its methods in the directory (job-style included), then stops.
  const first = await startService({ urls, namespace: ns.namespace, name: service, directory, methods });
  await waitFor(async () => (await directory.lookup('cj.render'))?.jobStyle === true, { message: 'method recorded' });
  await first.close();
});
afterAll(() => td.run());

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

it('sends a job-style method persistent without --persistent, and it waits for a worker', async () => {
  const env = { AMQP_URL: urls, REDIS_URL: redisUrl(), WARREN_NAMESPACE: ns.namespace, WARREN_GATEWAY: 'off' };
  const run = runCli(['call', 'cj.render', '"q1"', '--timeout', '60000'], { env });
  let props: amqp.MessageProperties | undefined;
  await waitFor(async () => (props = await peek(ns.names.serviceQueue(service))) !== undefined, { message: 'the job waits in the queue', timeoutMs: 20_000 });
  expect(props?.deliveryMode).toBe(2);
  const worker = await startService({ urls, namespace: ns.namespace, name: service, methods });
  td.add(() => worker.close());
  await expect(run).resolves.toMatchObject({ code: 0, stdout: '"rendered q1"\n' });
}, 30_000);
