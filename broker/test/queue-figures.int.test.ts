// The queue made visible (docs/gateway-operators.md, "Queue figures"): GET /services and /metrics show each
// service's ready and unacked messages, rates, consumers, dead letters and delay-queue depths from
// the RabbitMQ management API when configured, and ready, consumers and dead letters from passive
// declares when it is not (or does not answer, which /services says). Calls made by an AMQP caller,
// not through the gateway, count as queued like any other.
// The management half needs the rabbitmq_management plugin (RABBITMQ_MANAGEMENT_URL, default
// http://guest:guest@127.0.0.1:15672); without it that half is skipped, saying so.
import { RetryableError, connectClient, startService, type RpcClient } from '@warren/amqp';
import { Teardown, amqpUrl, waitFor } from '@warren/testkit';
import { TestNamespace, publishRaw } from '../../test/support/amqp';
import { startBroker, type Broker, type BrokerOptions } from '../src';
import { parseMetrics } from './support';

const td = new Teardown();
afterAll(() => td.run());
const ns = new TestNamespace();
const urls = amqpUrl();
const service = ns.service('qf-work');
const retryWaitMs = 600_000;
const managementUrl = process.env['RABBITMQ_MANAGEMENT_URL'] ?? 'http://guest:guest@127.0.0.1:15672';
const releases: (() => void)[] = [];
let client: RpcClient;

type Queue = { source: string; messages: number; consumers: number; unacked?: number; deadLetters?: number; retry?: { delayMs: number; messages: number }[]; rates?: Record<string, number> };
type Services = { queueSource?: { source: string; fallbackReason?: string }; services: { name: string; queue?: Queue }[] };

async function managementAnswers(): Promise<boolean> {
  try {
    const u = new URL(managementUrl);
    const auth = Buffer.from(`${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`).toString('base64');
    u.username = '';
    u.password = '';
    return (await fetch(new URL('api/overview', u), { headers: { authorization: `Basic ${auth}` }, signal: AbortSignal.timeout(2000) })).ok;
  } catch {
    return false;
  }
}

async function broker(options: Partial<BrokerOptions> = {}): Promise<{ broker: Broker; url: string }> {
  const b = await startBroker({ urls, namespace: ns.namespace, serviceName: ns.service('warren-broker'), port: 0, defaultMetrics: false, ...options });
  td.add(() => b.close());
  const url = await b.listen();
  await waitFor(() => b.gateway.catalogue.current().methods.has('qf.hold'), { message: 'the worker announced' });
  return { broker: b, url };
}

async function servicesOf(url: string): Promise<Services> {
  return (await (await fetch(`${url}/services`)).json()) as Services;
}

async function queueOf(url: string): Promise<Queue | undefined> {
  return (await servicesOf(url)).services.find((s) => s.name === service)?.queue;
}

beforeAll(async () => {
  td.add(() => ns.destroy());
  ns.queue(ns.names.retryQueue(service, retryWaitMs));
  const worker = await startService({
    urls, namespace: ns.namespace, name: service, prefetch: 2,
    methods: {
      'qf.hold': { handler: () => new Promise((resolve) => releases.push(() => resolve('released'))) },
      'qf.later': { retry: { attempts: 2, backoffMs: retryWaitMs }, handler: () => { throw new RetryableError('later'); } },
    },
  });
  td.add(() => worker.close());
  td.add(async () => {
    for (const release of releases) release();
  });
  client = await connectClient({ urls, namespace: ns.namespace, defaultTimeoutMs: 1_200_000 });
  td.add(() => client.close());
  // A dead letter: a body no handler can take.
  await publishRaw(ns.names.requestExchange, 'qf.hold', Buffer.from('not json'));
  // A retry waiting in its delay queue, two calls running (the prefetch), three waiting: all from an AMQP caller.
  void client.call('qf.later', []).catch(() => undefined);
  for (let i = 0; i < 5; i++) void client.call('qf.hold', []).catch(() => undefined);
  await waitFor(() => releases.length === 2, { message: 'two calls running' });
});

describe('without the management API (passive declares)', () => {
  it('shows ready, consumers and dead letters, and says where they come from', async () => {
    const { url } = await broker();
    await waitFor(async () => {
      const q = await queueOf(url);
      return q?.messages === 3 && q.deadLetters === 1;
    }, { message: 'three queued and one dead letter', timeoutMs: 10_000 });
    const body = await servicesOf(url);
    expect(body.queueSource).toEqual({ source: 'amqp' });
    const q = await queueOf(url);
    expect(q).toEqual({ source: 'amqp', messages: 3, consumers: 1, deadLetters: 1 });
  });

  it('falls back to passive declares when the management API does not answer, and says why', async () => {
    const { url } = await broker({ rabbitmqManagement: { url: 'http://guest:guest@127.0.0.1:9', timeoutMs: 500 } });
    const body = await servicesOf(url);
    expect(body.queueSource).toMatchObject({ source: 'amqp', fallbackReason: expect.any(String) });
    expect(body.services.find((s) => s.name === service)?.queue).toMatchObject({ source: 'amqp', messages: 3, consumers: 1 });
  });
});

describe('with the management API', () => {
  let available = false;
  beforeAll(async () => {
    available = await managementAnswers();
    if (!available) console.warn(`management API not reachable at ${new URL(managementUrl).host}: rabbitmq-plugins enable rabbitmq_management to run this part`);
  });

  it('shows ready, unacked, consumers, rates, dead letters and delay queues, in /services and /metrics', async () => {
    if (!available) return;
    const { url } = await broker({ rabbitmqManagement: { url: managementUrl } });
    // RabbitMQ refreshes its statistics every few seconds.
    await waitFor(async () => {
      const q = await queueOf(url);
      return q?.messages === 3 && q.unacked === 2 && q.consumers === 1 && q.deadLetters === 1 && q.retry?.[0]?.messages === 1;
    }, { message: 'the management figures', timeoutMs: 20_000, intervalMs: 250 });
    const body = await servicesOf(url);
    expect(body.queueSource).toEqual({ source: 'management' });
    const q = await queueOf(url);
    expect(q).toMatchObject({ source: 'management', messages: 3, unacked: 2, consumers: 1, deadLetters: 1, retry: [{ delayMs: retryWaitMs, messages: 1 }] });
    expect(Object.keys(q?.rates ?? {}).sort()).toEqual(['ack', 'deliver', 'publish']);

    const { samples } = parseMetrics(await (await fetch(`${url}/metrics`)).text());
    const sample = (name: string): number | undefined => samples.get(`${name}{service="${service}"}`);
    expect(sample('warren_service_queue_messages')).toBe(3);
    expect(sample('warren_service_queue_unacked_messages')).toBe(2);
    expect(sample('warren_service_retry_messages')).toBe(1);
    expect(sample('warren_service_dead_letter_messages')).toBe(1);
  });
});
