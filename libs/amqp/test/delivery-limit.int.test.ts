// The poison guard of a quorum request queue (`deliveryLimit`, x-delivery-limit):
// a request whose every delivery is lost with its worker's connection (as one
// that crashes every worker it reaches would be) is dead-lettered by RabbitMQ
// after the limit, into the service's dead-letter queue, instead of going round
// for ever; without the limit it keeps coming back.
import { DeadLetterQueues, RpcClient, WarrenService } from '@warren/amqp';
import { AmqpConnection } from '@warren/amqp-transport';
import { ErrorCode, wireErrorOf } from '@warren/jsonrpc';
import { Teardown, amqpUrl, waitFor } from '@warren/testkit';
import { TestNamespace, queueDepth } from '../../../test/support/amqp';

const td = new Teardown();
const ns = new TestNamespace();
afterAll(() => td.run());
beforeAll(() => td.add(() => ns.destroy()));

/** A service whose handler cuts its own connection on every delivery, so the request is requeued each time. */
async function poisoned(name: string, deliveryLimit: number | undefined): Promise<{ starts: () => number }> {
  const connection = new AmqpConnection({ urls: amqpUrl(), reconnect: { initialDelayMs: 20, maxDelayMs: 100 } });
  await connection.start();
  td.add(() => connection.close());
  let starts = 0;
  const service = await WarrenService.start(connection, {
    namespace: ns.namespace,
    name: ns.service(name),
    queueType: 'quorum',
    ...(deliveryLimit === undefined ? {} : { deliveryLimit }),
    methods: {
      [`${name}.crash`]: {
        handler: async (_p, ctx) => {
          starts++;
          // A delivery can come while the reconnect's setups still run: cut once the connection is open.
          const cut = (): void => void connection.simulateLoss();
          if (connection.state.type === 'open') cut();
          else connection.once('open', cut);
          await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve, { once: true }));
          return 'unreachable';
        },
      },
    },
  });
  td.add(() => service.close());
  return { starts: () => starts };
}

async function caller(): Promise<RpcClient> {
  const connection = new AmqpConnection({ urls: amqpUrl() });
  await connection.start();
  const client = await RpcClient.create(connection, { namespace: ns.namespace }, true);
  td.add(() => client.close());
  return client;
}

it('dead-letters a request after deliveryLimit redeliveries, and no further delivery starts it', async () => {
  const worker = await poisoned('limited', 2);
  const client = await caller();
  const call = client.call('limited.crash', [], { timeoutMs: 5000 }).catch((err: unknown) => wireErrorOf(err)?.code);
  await waitFor(async () => (await queueDepth(ns.names.deadLetterQueue('limited'))) === 1, { timeoutMs: 15_000, intervalMs: 100, message: 'the request in the dead-letter queue' });
  // The first delivery and two redeliveries; the next return went to the dead-letter exchange.
  expect(worker.starts()).toBe(3);
  expect(await queueDepth(ns.names.serviceQueue('limited'))).toBe(0);
  // Nobody answers a dead-lettered request: the caller hears its deadline, not silence.
  await expect(call).resolves.toBe(ErrorCode.DeadlineExceeded);
  // RabbitMQ dead-lettered it itself: dlq.list reads its reason, count and time from x-death (a timestamp field).
  const browser = new AmqpConnection({ urls: amqpUrl() });
  await browser.start();
  td.add(() => browser.close());
  const [letter] = await new DeadLetterQueues(browser, { namespace: ns.namespace }).list([ns.service('limited')]);
  expect(letter).toMatchObject({ method: 'limited.crash', reason: 'delivery_limit' });
  expect(Math.abs((letter?.deadLetteredAt ?? 0) - Date.now())).toBeLessThan(60_000);
}, 30_000);

it('without a limit the same request keeps coming back', async () => {
  const worker = await poisoned('unlimited', undefined);
  const client = await caller();
  const call = client.call('unlimited.crash', [], { timeoutMs: 20_000 }).catch((err: unknown) => wireErrorOf(err)?.code);
  await waitFor(() => worker.starts() > 4, { timeoutMs: 15_000, message: 'more deliveries than the limited queue allows' });
  expect(await queueDepth(ns.names.deadLetterQueue('unlimited'))).toBe(0);
  await client.close();
  await expect(call).resolves.toBe(ErrorCode.ShuttingDown);
}, 30_000);
