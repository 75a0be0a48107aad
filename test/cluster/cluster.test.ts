// Warren on a three-node RabbitMQ cluster (extra nodes started for this file,
// never the machine's own) with in-flight tracking on a three-master Redis
// Cluster. The caller is on node A, the workers on B and C; every connection
// is given the cluster's URL list and fails over by itself.
//  - calls and notifications cross nodes; the service queues are quorum queues
//    (the default when a connection names several nodes), reply and instance
//    queues stay exclusive;
//  - a worker node is hard-killed (SIGKILL of its Erlang VM), then the
//    caller's node is stopped (`rabbitmqctl stop_app`), each with 300 tracked
//    calls in flight and persistent jobs waiting: no caller hangs, no tracked
//    call runs twice, every call that ran answers its result (through the
//    in-flight store when its reply queue died), every job runs exactly once,
//    and the consumers are back on the surviving nodes.
// The time from each node loss to the first successful call is printed (and
// kept out of the assertions: this machine's timings are noise).
//
// It starts three RabbitMQ nodes (a minute or more on a loaded machine), so it
// is a late stage of its own: `npm run test:cluster` (jest.late.config.js).
import { RpcClient, WarrenService } from '@warren/amqp';
import { AmqpConnection } from '@warren/amqp-transport';
import { InflightView } from '@warren/inflight';
import { ErrorCode } from '@warren/jsonrpc';
import { RabbitCluster, waitFor, type RabbitNode } from '@warren/testkit';
import { ClusterRig, firstSuccessAfter, tally, trackedCall, type Outcome } from './rig';

let rig: ClusterRig;
let A: RabbitNode, B: RabbitNode, C: RabbitNode;
let workers: WarrenService[];
let jobWorkers: WarrenService[];
let caller: RpcClient, jobsClient: RpcClient;
let view: InflightView;
const noted: string[] = [];
const flushed = new Map<string, string[]>();
const figures: Record<string, unknown> = {};

/** Closed loops, each with one tracked call at a time: `loops` calls are in flight all the time. */
const loops = 300;
const workMs = 2000;
const callTimeoutMs = 20_000;
const jobs = 20;

beforeAll(async () => {
  if (!RabbitCluster.available()) throw new Error('the cluster stage needs root, the rabbitmq user and Debian\'s rabbitmq-server (it starts three extra nodes)');
  rig = await ClusterRig.start();
  [A, B, C] = rig.nodes as [RabbitNode, RabbitNode, RabbitNode];
  // Workers on B and C; each fails over to the other worker node first.
  const work = (id: string, order: RabbitNode[]) => rig.service(order, { name: 'work', instanceId: id, prefetch: 400, methods: rig.work('work.run') });
  workers = [await work('w1', [B, C]), await work('w2', [C, B])];
  // Jobs two at a time per worker, so most wait in their durable quorum queue when a node goes.
  const job = (id: string, order: RabbitNode[]) => rig.service(order, { name: 'jobs', instanceId: id, prefetch: 2, methods: rig.work('jobs.run') });
  jobWorkers = [await job('j1', [B, C]), await job('j2', [C, B])];
  for (const [id, order] of [['s1', [B, C]], ['s2', [C, B]]] as const) {
    flushed.set(id, []);
    await rig.service(order, {
      name: 'sink',
      instanceId: id,
      notifications: { 'cluster.note': { handler: (p) => void noted.push(String((p as string[])[0])) } },
      instanceNotifications: { 'cluster.flush': { handler: (p) => void flushed.get(id)?.push(String((p as string[])[0])) } },
    });
  }
  // The caller fails over to C first, so losing B (a worker node) leaves its connection alone.
  caller = await rig.client('caller', [A, C]);
  jobsClient = await rig.client('jobs-client', [A, C], { persistent: true });
  view = rig.view();
}, 400_000);

afterAll(async () => {
  console.log(`cluster failover figures: ${JSON.stringify(figures)}`);
  // Runs first: after a test that failed midway, the consumers' closes need the cluster's majority back.
  rig?.td.add(() => rig.rabbit.heal());
  await rig?.td.run();
}, 400_000);

const connection = (role: string): AmqpConnection => {
  const c = rig.connections.get(role);
  if (!c) throw new Error(`no connection ${role}`);
  return c;
};
const openOn = (role: string): string => {
  const s = connection(role).state;
  return s.type === 'open' ? s.url : s.type;
};

/** Both sink instances got `tag` on their own queue, and one of them on the shared one. */
async function notificationsReach(tag: string): Promise<void> {
  await caller.notify('cluster.note', [tag]);
  await caller.notify('cluster.flush', [tag]);
  await waitFor(() => noted.includes(tag) && [...flushed.values()].every((got) => got.includes(tag)), { timeoutMs: 30_000, message: `notification ${tag} delivered` });
}

it('serves calls and notifications across nodes: caller on A, workers on B and C, quorum service queues', async () => {
  expect(openOn('caller')).toContain(`:${A.port}`);
  expect(openOn('work-w1')).toContain(`:${B.port}`);
  expect(openOn('work-w2')).toContain(`:${C.port}`);

  const calls = Array.from({ length: 60 }, (_v, i) => trackedCall(caller, view, 'work.run', { ms: 20, n: i }, callTimeoutMs));
  expect(tally(await Promise.all(calls.map((c) => c.outcome)))).toEqual({ ok: 60 });
  const ranOn = new Set((await Promise.all(calls.map((c) => rig.runs(c.callId)))).flat());
  expect([...ranOn].sort()).toEqual(['w1', 'w2']);
  await notificationsReach('first');

  // Listed from node A: the shared queues are quorum queues, replicated; the caller's reply queue is its own.
  const rows = (await rig.rabbit.ctl(A, 'list_queues', '-q', '--no-table-headers', 'name', 'type', 'exclusive')).trim().split('\n').map((l) => l.split('\t'));
  const type = (q: string): string | undefined => rows.find((r) => r[0] === q)?.[1];
  const n = rig.ns.names;
  for (const s of ['work', 'jobs', 'sink']) {
    expect(type(n.serviceQueue(s))).toBe('quorum');
    expect(type(n.deadLetterQueue(s))).toBe('quorum');
  }
  expect(type(n.serviceEventQueue('sink'))).toBe('quorum');
  const instanceQueue = rows.find((r) => r[0] === n.instanceEventQueue('sink', 's1'));
  expect(instanceQueue?.slice(1)).toEqual(['classic', 'true']);
}, 120_000);

/**
 * Keeps `loops` tracked calls in flight, with `jobs` persistent jobs started
 * alongside, runs `lose` once they are flowing, and waits until calls flow
 * again. `watch` is a connection to the node that goes: its loss marks the
 * moment of the node loss.
 */
async function stormThrough(label: string, watch: string, lose: () => Promise<void>): Promise<void> {
  let calling = true;
  let inFlight = 0;
  const settled: { callId: string; outcome: Outcome; at: number }[] = [];
  const closedLoops = Array.from({ length: loops }, async (_v, k) => {
    for (let i = 0; calling; i++) {
      inFlight++;
      const call = trackedCall(caller, view, 'work.run', { ms: workMs, n: k * 100_000 + i }, callTimeoutMs);
      const outcome = await call.outcome;
      inFlight--;
      settled.push({ callId: call.callId, outcome, at: Date.now() });
    }
  });
  // Teardown runs last-in first: a failure below must not leave loops calling into closed clients.
  rig.td.add(() => void (calling = false));
  const jobCalls = Array.from({ length: jobs }, (_v, i) => trackedCall(jobsClient, view, 'jobs.run', { ms: 300, n: i }, 120_000));
  await waitFor(() => workers.reduce((sum, w) => sum + w.stats().running, 0) >= loops * 0.9 && jobWorkers.every((w) => w.stats().running === 2), { timeoutMs: 60_000, intervalMs: 50, message: 'calls and jobs running on both workers' });

  const losing = lose();
  await waitFor(() => connection(watch).state.type !== 'open', { timeoutMs: 60_000, intervalMs: 5, message: `${watch}'s connection lost with its node` });
  const lossAt = Date.now();
  const inFlightAtLoss = inFlight;
  await losing;
  const firstOkMs = await firstSuccessAfter(caller, 'work.run', lossAt);
  // The loops go on until a full round of calls made after the loss has settled.
  await waitFor(() => settled.filter((s) => s.at > lossAt + workMs && s.outcome === 'ok').length >= loops, { timeoutMs: 120_000, intervalMs: 100, message: 'calls flowing again after the loss' });
  calling = false;
  await Promise.all(closedLoops);
  const jobOutcomes = await Promise.all(jobCalls.map((j) => j.outcome));

  const runs = await Promise.all(settled.map((s) => rig.runs(s.callId)));
  const jobRuns = await Promise.all(jobCalls.map((j) => rig.runs(j.callId)));
  const outcomes = tally(settled.map((s) => s.outcome));
  const health = Object.fromEntries([...rig.trackers].filter(([id]) => /^[wj]\d$/.test(id)).map(([id, t]) => {
    const h = t.health();
    return [id, { untracked: h.untracked, waited: h.waited, answeredFromStore: h.answeredFromStore, takeovers: h.takeovers, leasesLost: h.leasesLost }];
  }));
  figures[label] = { inFlightAtLoss, firstOkMsAfterLoss: firstOkMs, calls: settled.length, outcomes, jobs: tally(jobOutcomes), health };

  expect(inFlightAtLoss).toBeGreaterThanOrEqual(loops);
  // No caller hangs; every error is a documented one: -32007 for a call whose request died with its
  // connection before any queue took it (nothing ran, so nothing was stored to recover).
  const allowed: Outcome[] = ['ok', ErrorCode.ConnectionLost];
  expect(settled.filter((s) => !allowed.includes(s.outcome))).toEqual([]);
  // Exactly-once side effects: no tracked call ran twice, and each one that ran answered its own result.
  expect(runs.filter((r) => r.length > 1)).toEqual([]);
  expect(settled.filter((s, i) => (runs[i]?.length ?? 0) > 0 && s.outcome !== 'ok')).toEqual([]);
  // Durable jobs are not lost: each answered, each ran once.
  expect(tally(jobOutcomes)).toEqual({ ok: jobs });
  expect(jobRuns.map((r) => r.length)).toEqual(jobCalls.map(() => 1));
  // Consumers are back: both sink instances (one per worker node) get notifications again.
  await notificationsReach(`after-${label}`);
  for (const c of [caller, jobsClient]) expect(c.stats()).toMatchObject({ pending: 0, onWire: 0 });
}

it('loses a worker node to SIGKILL with 300 tracked calls in flight: no hung caller, no duplicate, no lost job', async () => {
  try {
    await stormThrough('kill-B', 'work-w1', () => rig.rabbit.kill(B));
    // w1 and j1 and s1 moved to C; the caller stayed on A.
    for (const role of ['work-w1', 'jobs-j1', 'sink-s1']) expect(openOn(role)).toContain(`:${C.port}`);
    expect(openOn('caller')).toContain(`:${A.port}`);
  } finally {
    // The killed node comes back from its data directory and rejoins; quorum queues get their third member again
    // (the next test takes another node away, and needs a majority left).
    await rig.rabbit.heal();
  }
  await waitFor(async () => (await rig.rabbit.runningNodes(A)).length === 3, { timeoutMs: 120_000, intervalMs: 1000, message: 'B back in the cluster' });
}, 400_000);

it('stops the caller\'s node (rabbitmqctl stop_app) with 300 tracked calls in flight: the caller fails over, replies are recovered', async () => {
  try {
    await stormThrough('stop_app-A', 'caller', () => rig.rabbit.stopApp(A));
    expect(openOn('caller')).toContain(`:${C.port}`);
    expect(connection('caller').reconnects).toBeGreaterThanOrEqual(1);
  } finally {
    await rig.rabbit.heal();
  }
}, 400_000);
