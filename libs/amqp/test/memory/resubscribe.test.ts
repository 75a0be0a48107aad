// Consumers that always come back (issue 28, item 1), over the in-memory broker on the fake clock:
// a consumer RabbitMQ cancels is re-subscribed, and a re-declare that fails (a classic queue whose
// home node is down answers 404) is retried with backoff until it consumes again or the service closes.
// While not consuming, the instance says so (`consuming: false`); a request RabbitMQ returns for a
// service the caller's directory knows is -32002, never -32601.
import { AvailabilityGate, ServiceRegistry, names, type WarrenService } from '@warren/amqp';
import { MemoryChannel } from '@warren/amqp-transport';
import { createLogger } from '@warren/logger';
import { Writable } from 'node:stream';
import { World, rejection, settleTicks, until, useWorld } from './world';

let w: World;
useWorld((made) => (w = made));
afterEach(() => jest.restoreAllMocks());

const queue = names('warren').serviceQueue('calc');

/** A calculator whose log lines are kept, to read back what it said. */
async function calc(): Promise<{ service: WarrenService; lines: Record<string, unknown>[] }> {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({ write: (chunk: Buffer, _enc, done) => (lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>), done()) });
  const service = await w.service({ name: 'calc', logger: createLogger({ level: 'warn', destination }), methods: { 'calc.add': { handler: (p) => (p as number[]).reduce((a, b) => a + b, 0) } } });
  return { service, lines };
}

/** Declares of the service queue made on any memory channel from now on. */
function countDeclares(): { readonly count: number } {
  const seen = { count: 0 };
  const real = MemoryChannel.prototype.assertQueue;
  jest.spyOn(MemoryChannel.prototype, 'assertQueue').mockImplementation(function (this: MemoryChannel, name, options) {
    if (name === queue) seen.count++;
    return real.call(this, name, options);
  });
  return seen;
}

it('single node: a deleted queue is declared again and consumed, and calls are answered again', async () => {
  const { service } = await calc();
  const client = await w.client();
  expect(await until(client.call('calc.add', [1, 2]))).toBe(3);
  const admin = await w.bus.connect().model?.createChannel();
  await admin?.deleteQueue(queue);
  await settleTicks();
  expect(service.consuming).toBe(false);
  await until(new Promise<void>((resolve) => {
    const poll = (): void => void (service.consuming ? resolve() : setTimeout(poll, 10));
    poll();
  }));
  expect(w.bus.queue(queue)?.consumerCount).toBe(1);
  expect(await until(client.call('calc.add', [2, 3]))).toBe(5);
});

it('home node down: cancelled, says consuming: false, retries the failing re-declare with backoff until the node is back, then consumes again', async () => {
  const { service, lines } = await calc();
  const client = await w.client();
  const declares = countDeclares();
  const down = w.bus.takeQueueDown(queue);
  await settleTicks();
  expect(service.consuming).toBe(false);
  expect(service.describe().consuming).toBe(false);
  // Ten seconds with the node down: attempts back off (100 ms doubling to 5 s, with jitter), every one failing.
  await jest.advanceTimersByTimeAsync(10_000);
  const failedWhileDown = declares.count;
  expect(failedWhileDown).toBeGreaterThanOrEqual(4);
  expect(failedWhileDown).toBeLessThanOrEqual(8);
  expect(lines.filter((l) => l['msg'] === 'service not consuming: re-subscribe failed; trying again').length).toBe(failedWhileDown);
  expect(service.consuming).toBe(false);
  down.up();
  // The next attempt comes within the backoff's ceiling (5 s) and consumes.
  await jest.advanceTimersByTimeAsync(5000);
  expect(service.consuming).toBe(true);
  expect(service.describe().consuming).toBe(true);
  expect(w.bus.queue(queue)?.consumerCount).toBe(1);
  expect(await until(client.call('calc.add', [20, 22]))).toBe(42);
  // Consuming again: no more attempts.
  const settled = declares.count;
  await jest.advanceTimersByTimeAsync(20_000);
  expect(declares.count).toBe(settled);
});

it('keeps announcing consuming: false for as long as it cannot consume, instead of falling silent and vanishing', async () => {
  await calc();
  const registry = await until(ServiceRegistry.start(w.bus.connect(), { announceNow: false }));
  await jest.advanceTimersByTimeAsync(61_000);
  expect(registry.list().map((i) => [i.service, i.consuming])).toEqual([['calc', true]]);
  const down = w.bus.takeQueueDown(queue);
  // Five announce intervals (60 s each): a silent instance would have been dropped after three.
  await jest.advanceTimersByTimeAsync(300_000);
  expect(registry.list().map((i) => [i.service, i.consuming])).toEqual([['calc', false]]);
  down.up();
  await jest.advanceTimersByTimeAsync(66_000);
  expect(registry.list().map((i) => [i.service, i.consuming])).toEqual([['calc', true]]);
  await until(registry.close());
});

it('stops retrying when the service closes while the node is down', async () => {
  const { service } = await calc();
  const declares = countDeclares();
  w.bus.takeQueueDown(queue);
  await jest.advanceTimersByTimeAsync(1000);
  expect(declares.count).toBeGreaterThan(0);
  await until(service.close());
  const atClose = declares.count;
  await jest.advanceTimersByTimeAsync(30_000);
  expect(declares.count).toBe(atClose);
});

it('a request returned because the queue\'s node is down is -32002 by default (the announcements) and for a service the directory knows; -32601 stays for an unknown method', async () => {
  await calc();
  const client = await w.client();
  w.bus.takeQueueDown(queue);
  await settleTicks();
  // RabbitMQ returns both 312 NO_ROUTE; the client's default explainer asks the announcements, which calc still
  // answers (its control queue is consumed on a channel of its own, not the one its request queue failed on).
  expect(await rejection(until(client.call('calc.add', [1, 2], { timeoutMs: 60_000 })))).toMatchObject({ code: 'RPC_NO_CONSUMERS', reason: 'queue_unavailable', service: 'calc' });
  expect(await rejection(until(client.call('nobody.here', [], { timeoutMs: 60_000 })))).toMatchObject({ code: 'RPC_NO_ROUTE' });
  const gate = new AvailabilityGate({ serviceOf: (m) => (m.startsWith('calc.') ? 'calc' : undefined) }, { read: () => Promise.resolve(undefined) });
  client.checkAvailability((m) => gate.check(m));
  client.explainReturns((m) => gate.returned(m));
  expect(await rejection(until(client.call('calc.add', [1, 2], { timeoutMs: 60_000 })))).toMatchObject({ code: 'RPC_NO_CONSUMERS', service: 'calc', method: 'calc.add' });
  expect(await rejection(until(client.call('nobody.here', [], { timeoutMs: 60_000 })))).toMatchObject({ code: 'RPC_NO_ROUTE' });
});
