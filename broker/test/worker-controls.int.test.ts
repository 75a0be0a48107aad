// Worker controls over the real RabbitMQ (docs/gateway-operators.md, "Worker controls"): pause stops an
// instance consuming and its calls wait in the queue (not refused -32002), resume runs each of them
// once; calls taken before the pause finish on it; cancel-all answers every running call -32003;
// drain lets the running calls finish, sends new ones to the other instance, then withdraws. Every
// call is counted in the handler: none lost, none run twice.
import { connectClient, startService, type RpcClient, type ServiceMethod } from '@warren/amqp';
import { ErrorCode, wireErrorOf } from '@warren/jsonrpc';
import { Teardown, amqpUrl, waitFor } from '@warren/testkit';
import { TestNamespace } from '../../test/support/amqp';
import { runCli } from '../../test/integration/helpers';
import { startBroker, type Broker } from '../src';
import { postRpc } from './support';

const td = new Teardown();
afterAll(() => td.run());
const ns = new TestNamespace();
const urls = amqpUrl();
const service = ns.service('ctl-work');
const w1 = `${ns.namespace}-w1`;
const w2 = `${ns.namespace}-w2`;

/** How many times each call's key ran, and where. */
const runs = new Map<string, string[]>();
/** Held calls running now, by key: release answers them. */
const holds = new Map<string, () => void>();

function job(instance: string): ServiceMethod {
  return {
    handler: (p, ctx) => {
      const { key, hold } = p as { key: string; hold?: boolean };
      runs.set(key, [...(runs.get(key) ?? []), instance]);
      if (hold !== true) return key;
      return new Promise((resolve) => {
        holds.set(key, () => resolve(key));
        ctx.signal.addEventListener('abort', () => {
          holds.delete(key);
          resolve('aborted');
        }, { once: true });
      });
    },
  };
}

let broker: Broker;
let url: string;
let client: RpcClient;

beforeAll(async () => {
  td.add(() => ns.destroy());
  broker = await startBroker({ urls, namespace: ns.namespace, serviceName: ns.service('warren-broker'), port: 0, defaultMetrics: false });
  td.add(() => broker.close());
  url = await broker.listen();
  for (const instanceId of [w1, w2]) {
    const s = await startService({ urls, namespace: ns.namespace, name: service, instanceId, prefetch: 4, methods: { 'ctl.job': job(instanceId) } });
    td.add(() => s.close());
  }
  client = await connectClient({ urls, namespace: ns.namespace, defaultTimeoutMs: 30_000 });
  td.add(() => client.close());
  td.add(async () => {
    for (const release of holds.values()) release();
  });
  await waitFor(() => broker.registry.list().filter((i) => i.service === service).length === 2, { message: 'both workers announced' });
});

async function control(method: string, instanceId: string): Promise<{ applied: boolean; cancelled?: number; worker?: { paused: boolean; draining: boolean } }> {
  const res = await postRpc(url, JSON.stringify({ jsonrpc: '2.0', method, params: { instanceId }, id: 1 }));
  const body = (await res.json()) as { result?: { applied: boolean }; error?: unknown };
  if (body.result === undefined) throw new Error(`${method}: ${JSON.stringify(body.error)}`);
  return body.result;
}

function call(key: string, hold = false): Promise<unknown> {
  return client.call('ctl.job', { key, hold });
}

async function codeOf(p: Promise<unknown>): Promise<number | 'ok'> {
  try {
    await p;
    return 'ok';
  } catch (err) {
    return wireErrorOf(err)?.code ?? -1;
  }
}

async function queueDepth(): Promise<{ messages: number; consumers: number } | undefined> {
  const body = (await (await fetch(`${url}/services`)).json()) as { services: { name: string; queue?: { messages: number; consumers: number } }[] };
  return body.services.find((s) => s.name === service)?.queue;
}

describe('worker controls', () => {
  it('pause: calls wait in the queue, in-flight ones finish; resume runs each waiting call once', async () => {
    // Held calls on both instances, taken before the pause.
    const before = ['p-held-1', 'p-held-2', 'p-held-3', 'p-held-4'].map((k) => ({ key: k, answer: call(k, true) }));
    await waitFor(() => before.every((b) => holds.has(b.key)), { message: 'held calls running' });

    for (const w of [w1, w2]) expect(await control('workers.pause', w)).toMatchObject({ applied: true, worker: { paused: true } });
    await waitFor(async () => (await queueDepth())?.consumers === 0, { message: 'no consumer on the queue' });
    const listed = (await (await fetch(`${url}/services`)).json()) as { services: { name: string; instances: { worker?: { paused: boolean } }[] }[] };
    expect(listed.services.find((s) => s.name === service)?.instances.map((i) => i.worker?.paused)).toEqual([true, true]);

    // Calls made while every instance is paused wait (the gate does not refuse them -32002).
    const waiting = Array.from({ length: 10 }, (_, i) => `p-wait-${i}`).map((k) => ({ key: k, answer: call(k) }));
    await waitFor(async () => (await queueDepth())?.messages === 10, { message: 'ten calls ready in the queue' });
    expect(waiting.filter((w) => runs.has(w.key))).toEqual([]);

    // What was taken before the pause finishes on its instance, once.
    for (const b of before) holds.get(b.key)?.();
    for (const b of before) await expect(b.answer).resolves.toBe(b.key);

    for (const w of [w1, w2]) expect(await control('workers.resume', w)).toMatchObject({ applied: true, worker: { paused: false } });
    for (const w of waiting) await expect(w.answer).resolves.toBe(w.key);
    for (const k of [...before, ...waiting].map((x) => x.key)) expect(runs.get(k)).toHaveLength(1);
  });

  it('cancel-all: every call running on the instance is answered -32003, and none runs again', async () => {
    await control('workers.pause', w2);
    try {
      const keys = ['c-1', 'c-2', 'c-3'];
      const answers = keys.map((k) => call(k, true));
      await waitFor(() => keys.every((k) => holds.has(k)), { message: 'three calls running on w1' });
      expect(await control('workers.cancelAll', w1)).toMatchObject({ applied: true, cancelled: 3 });
      for (const a of answers) expect(await codeOf(a)).toBe(ErrorCode.Cancelled);
      for (const k of keys) expect(runs.get(k)).toEqual([w1]);
    } finally {
      await control('workers.resume', w2);
    }
  });

  it('warren worker pause and resume, over RabbitMQ and through the gateway', async () => {
    const env = { AMQP_URL: urls, WARREN_NAMESPACE: ns.namespace, WARREN_GATEWAY: 'off' };
    const paused = await runCli(['worker', 'pause', w1, '--service', service], { env });
    expect(paused).toMatchObject({ code: 0, stdout: `pause ${service}/${w1}  (paused)\n` });
    expect(broker.registry.list().find((i) => i.instanceId === w1)?.worker?.paused).toBe(true);
    const resumed = await runCli(['--via', 'gateway', '--json', 'worker', 'resume', w1], { env: { ...env, WARREN_GATEWAY: url } });
    expect(resumed.code).toBe(0);
    expect(JSON.parse(resumed.stdout)).toMatchObject({ service, instanceId: w1, action: 'resume', applied: true, worker: { paused: false } });
    const missing = await runCli(['worker', 'drain', 'no-such-worker'], { env });
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toContain('no_such_worker');
  });

  it('drain: running calls finish, new ones go to the other instance, then the drained one withdraws', async () => {
    await control('workers.pause', w2);
    const held = ['d-held-1', 'd-held-2'].map((k) => ({ key: k, answer: call(k, true) }));
    await waitFor(() => held.every((h) => holds.has(h.key)), { message: 'held calls running on w1' });
    await control('workers.resume', w2);

    expect(await control('workers.drain', w1)).toMatchObject({ applied: true, worker: { draining: true } });
    const after = Array.from({ length: 6 }, (_, i) => `d-new-${i}`).map((k) => ({ key: k, answer: call(k) }));
    for (const a of after) await expect(a.answer).resolves.toBe(a.key);
    for (const a of after) expect(runs.get(a.key)).toEqual([w2]);

    // Still listed (draining) while its calls run; gone once they are done.
    expect(broker.registry.list().some((i) => i.instanceId === w1)).toBe(true);
    for (const h of held) holds.get(h.key)?.();
    for (const h of held) await expect(h.answer).resolves.toBe(h.key);
    await waitFor(() => !broker.registry.list().some((i) => i.instanceId === w1), { message: 'w1 withdrawn after its drain' });
    for (const h of held) expect(runs.get(h.key)).toEqual([w1]);
  });

  it('a worker that is not there, or the broker itself, is a clear -32602', async () => {
    for (const instanceId of ['no-such-worker', broker.service.instanceId]) {
      const body = (await (await postRpc(url, JSON.stringify({ jsonrpc: '2.0', method: 'workers.pause', params: { instanceId }, id: 1 }))).json()) as { error?: { code: number; data?: { reason?: string } } };
      expect(body.error).toMatchObject({ code: ErrorCode.InvalidParams, data: { reason: instanceId === 'no-such-worker' ? 'no_such_worker' : 'broker_instance' } });
    }
    const bad = (await (await postRpc(url, JSON.stringify({ jsonrpc: '2.0', method: 'workers.drain', params: { instanceId: '../x' }, id: 1 }))).json()) as { error?: { code: number } };
    expect(bad.error?.code).toBe(ErrorCode.InvalidParams);
  });
});
