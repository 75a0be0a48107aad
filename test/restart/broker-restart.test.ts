// A full broker restart (`rabbitmqctl stop_app`, then `start_app`) with work in
// every state: persistent job requests waiting in a durable quorum queue and
// in a durable classic queue, jobs running on tracked workers, ordinary calls
// in flight, persistent notifications waiting for a subscriber that is down,
// and calls and notifications made while the broker is down.
// Afterwards: every job ran exactly once and its caller got the result (the
// reply queue died with the broker, so callWithRecovery fetches it from the
// in-flight store), ordinary calls on the wire at the restart ended -32007 within
// 5 s of their client's reconnect (the client's restart probe tells a restarted
// broker from a dropped connection), never at their deadline, clients and
// services reconnected by themselves, and new calls and notifications work.
//
// It takes RabbitMQ down for several seconds, so it runs in a stage of its own
// after every other test (`npm run test:restart`, jest.late.config.js), and
// refuses to run while another jest process is running.
import { Redis } from 'ioredis';
import { RpcClient, WarrenService, type ClientOptions, type ServiceOptions } from '@warren/amqp';
import { AmqpConnection } from '@warren/amqp-transport';
import { InflightView, callWithRecovery, createRedisTracker } from '@warren/inflight';
import { ErrorCode, wireErrorOf } from '@warren/jsonrpc';
import { Teardown, amqpUrl, redisUrl, waitFor } from '@warren/testkit';
import { runsKey, workMethods } from '../../scripts/soak-worker';
import { deleteRedisKeys } from '../integration/helpers';
import { rabbitmqctl } from '../integration/faults/rabbitmqctl';
import { assertRestartAlone } from './alone';
import { TestNamespace, queueDepth } from '../support/amqp';

const td = new Teardown();
const ns = new TestNamespace();
const prefix = ns.namespace;
const redis = new Redis(redisUrl(), { maxRetriesPerRequest: 1 });
td.add(() => redis.disconnect());
const connections: AmqpConnection[] = [];
let brokerDown = false;

afterAll(async () => {
  // Whatever failed, leave the broker running for whoever comes next.
  if (brokerDown) await rabbitmqctl(['start_app']).catch(() => undefined);
  await td.run();
});

async function connect(role: string): Promise<AmqpConnection> {
  const connection = new AmqpConnection({ urls: amqpUrl(), connectionName: `${ns.namespace}-${role}`, heartbeatSeconds: 2, reconnect: { initialDelayMs: 100, maxDelayMs: 1000 } });
  await connection.start();
  td.add(() => connection.close());
  connections.push(connection);
  return connection;
}

async function service(options: Omit<ServiceOptions, 'namespace'>): Promise<WarrenService> {
  const tracker = createRedisTracker({ redis: redisUrl(), keyPrefix: prefix, leaseMs: 3000, heartbeatMs: 500 });
  const s = await WarrenService.start(await connect(options.name), { namespace: ns.namespace, ...options, name: ns.service(options.name), tracker });
  td.add(() => s.close());
  return s;
}

async function client(role: string, options: Omit<ClientOptions, 'namespace'> = {}): Promise<RpcClient> {
  const c = await RpcClient.create(await connect(role), { namespace: ns.namespace, ...options });
  td.add(() => c.close());
  return c;
}

type Outcome = 'ok' | number | string;
const outcomeOf = (err: unknown): Outcome => wireErrorOf(err)?.code ?? String(err);

it('durable job requests survive a broker restart and run once; everyone reconnects; new calls succeed', async () => {
  assertRestartAlone();
  td.add(() => ns.destroy());
  td.add(() => deleteRedisKeys(`${prefix}:`));

  // Two job pools (a quorum queue, a classic durable queue), four jobs at a time each; a fast service; a subscriber.
  const pools = [
    { name: 'jobsq', method: 'jobsq.run', queueType: 'quorum' as const },
    { name: 'jobsc', method: 'jobsc.run', queueType: 'classic' as const },
  ];
  const workers = await Promise.all(pools.map((p) => service({ name: p.name, queueType: p.queueType, durable: true, prefetch: 4, methods: workMethods(redis, prefix, p.method) })));
  const fast = await service({ name: 'fast', methods: workMethods(redis, prefix, 'fast.run') });
  const notes: string[] = [];
  await service({ name: 'sink', notifications: { 'restart.note': { handler: (p) => void notes.push(String((p as string[])[0])) } } });
  // A subscriber that is down over the restart: its durable queue keeps what is published to it meanwhile.
  const archived: string[] = [];
  const archive = { name: 'archive', notifications: { 'restart.archive': { handler: (p: unknown) => void archived.push(String((p as string[])[0])) } } };
  await (await service(archive)).close();
  const jobsClient = await client('jobs-client', { persistent: true });
  const view = new InflightView({ redis: redisUrl(), keyPrefix: prefix });
  td.add(() => view.close());
  const caller = await client('caller');
  const callerConnection = connections[connections.length - 1] as AmqpConnection;

  // 30 persistent jobs per pool, 400 ms each: four run, the rest wait in the durable queue when the broker stops.
  const jobs = pools.flatMap((p) => Array.from({ length: 30 }, (_, i) => {
    const callId = jobsClient.nextCallId();
    const answer = callWithRecovery<number>(jobsClient, view, p.method, { ms: 400, n: i }, { timeoutMs: 120_000, id: callId }).then((v): Outcome => (v === 2 * i ? 'ok' : `wrong ${v}`), outcomeOf);
    return { callId, answer };
  }));
  await waitFor(() => workers.every((w) => w.stats().running === 4), { timeoutMs: 10_000, message: 'four jobs running on each pool' });

  // Ordinary (non-persistent) calls keep flowing through the restart, 20 at a time.
  let calling = true;
  const calls: { startedAt: number; deadline: number; settledAt: number; outcome: Outcome }[] = [];
  const loops = Array.from({ length: 20 }, async (_v, k) => {
    for (let i = 0; calling; i++) {
      const startedAt = Date.now();
      const deadline = startedAt + 30_000;
      const outcome = await caller.call('fast.run', { ms: 5, n: i + k }, { timeoutMs: 30_000 }).then((v): Outcome => (v === 2 * (i + k) ? 'ok' : 'wrong'), outcomeOf);
      calls.push({ startedAt, deadline, settledAt: Date.now(), outcome });
    }
  });
  // A failure below must not leave the loops calling into a closed client (teardown runs last-in first).
  td.add(() => void (calling = false));
  await waitFor(() => calls.length >= 100, { timeoutMs: 10_000, message: 'ordinary calls flowing' });

  // Persistent notifications for the stopped subscriber, confirmed: in its durable queue, on disk.
  const archiveIds = Array.from({ length: 10 }, (_v, i) => `a${i}`);
  await Promise.all(archiveIds.map((id) => jobsClient.notify('restart.archive', [id])));
  // What the restart must keep: the jobs not yet taken, persistent, in the durable queues.
  for (const p of pools) expect(await queueDepth(ns.names.serviceQueue(p.name))).toBeGreaterThanOrEqual(20);

  // Plain calls running on the fast service when the broker stops (3 s each): their transient requests die with
  // the broker, so no answer can come.
  const lostIds: string[] = [];
  const lostCalls = Array.from({ length: 6 }, (_v, i) => {
    lostIds.push(caller.nextCallId());
    return caller.call('fast.run', { ms: 3000, n: 100 + i }, { timeoutMs: 30_000 }).then((): Outcome => 'ok', outcomeOf).then((outcome) => ({ outcome, settledAt: Date.now() }));
  });
  await waitFor(async () => (await Promise.all(lostIds.map((id) => redis.llen(runsKey(prefix, id))))).every((n) => n > 0), { timeoutMs: 10_000, message: 'the 3 s calls running' });

  brokerDown = true;
  const stoppedAt = Date.now();
  await rabbitmqctl(['stop_app']);
  await waitFor(() => connections.every((c) => c.state.type !== 'open'), { timeoutMs: 10_000, message: 'every connection lost' });
  // Made while the broker is away: held, and sent once it is back.
  const heldCall = caller.call('fast.run', { ms: 1, n: 21 }, { timeoutMs: 60_000 }).then((v): Outcome => (v === 42 ? 'ok' : 'wrong'), outcomeOf);
  const heldNote = caller.notify('restart.note', ['during'], { timeoutMs: 60_000 }).then((): Outcome => 'ok', outcomeOf);
  await rabbitmqctl(['start_app']);
  brokerDown = false;
  await waitFor(() => callerConnection.state.type === 'open', { timeoutMs: 60_000, intervalMs: 20, message: 'the caller reconnected' });
  const callerBackAt = Date.now();
  await waitFor(() => connections.every((c) => c.state.type === 'open'), { timeoutMs: 60_000, intervalMs: 100, message: 'every connection back' });
  expect(connections.map((c) => c.reconnects >= 1)).toEqual(connections.map(() => true));

  // Every job answered with its own result, and ran exactly once.
  expect((await Promise.all(jobs.map((j) => j.answer))).filter((o) => o !== 'ok')).toEqual([]);
  const runs = await Promise.all(jobs.map((j) => redis.lrange(runsKey(prefix, j.callId), 0, -1)));
  expect(runs.filter((r) => r.length !== 1)).toEqual([]);
  for (const p of pools) expect(await queueDepth(ns.names.serviceQueue(p.name))).toBe(0);
  // The jobs running when the broker stopped finished meanwhile; their redeliveries were answered from the store.
  for (const w of workers) expect(w.stats().answeredFromStore).toBeGreaterThanOrEqual(1);

  await expect(heldCall).resolves.toBe('ok');
  await expect(heldNote).resolves.toBe('ok');
  calling = false;
  await Promise.all(loops);
  // On the wire when the broker went: -32007 (`broker_restarted`: the reply queue is durable and survives, but the
  // client's restart probe says the broker lost the plain requests and replies) within 5 s of the caller's
  // reconnect, never at their deadline (-32001). The 3 s calls were certainly lost; a 5 ms call of the loops may
  // also have been answered before the broker went.
  const lost = await Promise.all(lostCalls);
  expect(lost.filter((c) => c.outcome !== ErrorCode.ConnectionLost || c.settledAt > callerBackAt + 5000)).toEqual([]);
  const onWire = calls.filter((c) => c.startedAt < stoppedAt && c.settledAt > stoppedAt);
  expect(onWire.filter((c) => !(['ok', ErrorCode.ConnectionLost] as Outcome[]).includes(c.outcome) || c.settledAt > callerBackAt + 5000)).toEqual([]);
  const allowed: Outcome[] = ['ok', ErrorCode.ConnectionLost, ErrorCode.ServiceUnavailable];
  expect(calls.filter((c) => !allowed.includes(c.outcome) || c.settledAt > c.deadline + 1500)).toEqual([]);

  // The subscriber that was down gets every persistent notification published before the restart.
  await service(archive);
  await waitFor(() => archived.length >= archiveIds.length, { message: 'persistent notifications kept over the restart' });
  expect([...new Set(archived)].sort()).toEqual(archiveIds);

  // New calls and notifications work; nothing is left pending.
  await expect(caller.call('fast.run', { ms: 1, n: 5 })).resolves.toBe(10);
  await expect(jobsClient.call('jobsq.run', { ms: 1, n: 6 })).resolves.toBe(12);
  await caller.notify('restart.note', ['after']);
  await waitFor(() => notes.includes('during') && notes.includes('after'), { message: 'notifications delivered' });
  for (const c of [caller, jobsClient]) expect(c.stats()).toMatchObject({ pending: 0, onWire: 0, buffered: 0 });
  for (const s of [...workers, fast]) expect(s.stats().running).toBe(0);
}, 180_000);
