// A worker whose Redis goes away keeps serving untracked (degraded mode);
// operators see it at once, not at the next announcement: GET /services shows
// the instance's tracking state and counters, and /metrics counts instances
// per service and tracking state. Both turn back when Redis answers again.
import { startService } from '@warren/amqp';
import { createRedisTracker } from '@warren/inflight';
import { FaultProxy, Teardown, amqpUrl, redisUrl, waitFor } from '@warren/testkit';
import { deleteRedisKeys } from '../../test/integration/helpers';
import { TestNamespace } from '../../test/support/amqp';
import { startBroker } from '../src';
import { parseMetrics, postRpc } from './support';

const td = new Teardown();
const ns = new TestNamespace();
afterAll(() => td.run());

interface ServicesBody {
  services: { name: string; instances: { instanceId: string; tracking?: { state: string; degradedTransitions: number; untracked: number } }[] }[];
}

it('shows a degraded tracker in /services and /metrics as soon as Redis goes, and tracking again when it is back', async () => {
  td.add(() => ns.destroy());
  td.add(() => deleteRedisKeys(`${ns.namespace}:`));
  const broker = await startBroker({ urls: amqpUrl(), namespace: ns.namespace, serviceName: ns.service('warren-broker'), port: 0, defaultMetrics: false });
  td.add(() => broker.close());
  const url = await broker.listen();
  const proxy = await FaultProxy.forUrl(redisUrl());
  td.add(() => proxy.close());
  const tracker = createRedisTracker({ redis: proxy.url(redisUrl()), keyPrefix: ns.namespace, commandTimeoutMs: 300, leaseMs: 1500, heartbeatMs: 100 });
  const name = ns.service('tracked');
  // A long interval: what the test sees comes from the announcements made on each change.
  const service = await startService({ urls: amqpUrl(), namespace: ns.namespace, name, announceIntervalMs: 60_000, methods: { echo: { handler: (p) => p ?? null } }, tracker });
  td.add(() => service.close());
  const series = (state: string): string => `warren_tracking_instances{service="${name}",state="${state}"}`;
  const metrics = async (): Promise<Map<string, number>> => parseMetrics(await (await fetch(`${url}/metrics`)).text()).samples;
  const instance = async (): Promise<NonNullable<ServicesBody['services'][number]['instances'][number]>['tracking']> => {
    const body = (await (await fetch(`${url}/services`)).json()) as ServicesBody;
    return body.services.find((s) => s.name === name)?.instances[0]?.tracking;
  };

  await waitFor(async () => (await instance())?.state === 'tracking', { message: 'tracking announced' });
  let m = await metrics();
  expect(m.get(series('tracking'))).toBe(1);
  expect(m.get(series('degraded'))).toBe(0);

  proxy.refuse(true);
  proxy.cutAll();
  await waitFor(async () => (await instance())?.state === 'degraded', { timeoutMs: 5000, message: 'degraded announced' });
  m = await metrics();
  expect(m.get(series('degraded'))).toBe(1);
  expect(m.get(series('tracking'))).toBe(0);
  // Calls keep flowing meanwhile, untracked.
  expect(await (await postRpc(url, '{"jsonrpc":"2.0","method":"echo","params":["still here"],"id":1}')).json()).toEqual({ jsonrpc: '2.0', result: ['still here'], id: 1 });

  proxy.refuse(false);
  await waitFor(async () => (await instance())?.state === 'tracking', { timeoutMs: 10_000, message: 'tracking announced again' });
  // The call made while Redis was away ran untracked, and is counted.
  expect(await instance()).toMatchObject({ state: 'tracking', degradedTransitions: 1, untracked: 1 });
  expect((await metrics()).get(series('degraded'))).toBe(0);
}, 30_000);
