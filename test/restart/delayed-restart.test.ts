// Delayed calls outlive every Warren process and a RabbitMQ restart (`rabbitmqctl stop_app`, then
// `start_app`): delayed calls and notifications are sent, by this process and by a `warren call --in`
// child that is killed (SIGKILL) while it waits; every Warren connection is gone; RabbitMQ restarts;
// then a worker starts and every one of them runs, once, none before it was due.
//
// It takes RabbitMQ down, so it runs in the restart stage (`npm run test:restart`), alone.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { connectClient, startService, type WarrenService } from '@warren/amqp';
import { Teardown, amqpUrl, waitFor } from '@warren/testkit';
import { repoRoot } from '../integration/helpers';
import { rabbitmqctl } from '../integration/faults/rabbitmqctl';
import { TestNamespace, queueDepth } from '../support/amqp';
import { assertRestartAlone } from './alone';

const td = new Teardown();
const ns = new TestNamespace().withDelayChain();
let brokerDown = false;

afterAll(async () => {
  if (brokerDown) await rabbitmqctl(['start_app']).catch(() => undefined);
  await td.run();
});

/** When each tagged call or notification started on the worker. */
const started = new Map<string, number[]>();

function worker(): Promise<WarrenService> {
  const record = (p: unknown): string => {
    const tag = (p as { tag: string }).tag;
    started.set(tag, [...(started.get(tag) ?? []), Date.now()]);
    return tag;
  };
  return startService({
    urls: amqpUrl(), namespace: ns.namespace, name: ns.service('later'), durable: true, reconnect: { initialDelayMs: 100, maxDelayMs: 1000 },
    methods: { 'later.run': { handler: record } },
    notifications: { 'later.job': { handler: (p) => void record(p) } },
  });
}

it('delayed calls and notifications survive the kill of every Warren process and a RabbitMQ restart, and none runs early', async () => {
  assertRestartAlone();
  td.add(() => ns.destroy());
  // The worker's durable queues and bindings exist; then it goes, so no Warren process is left while the calls wait.
  await (await worker()).close();

  const client = await connectClient({ urls: amqpUrl(), namespace: ns.namespace, defaultTimeoutMs: 120_000 });
  const sentAt = Date.now();
  const due = new Map<string, number>();
  const sends: Promise<unknown>[] = [];
  for (let i = 0; i < 20; i++) {
    const tag = `n${i}`;
    const at = sentAt + 20_000 + i * 500;
    due.set(tag, at);
    sends.push(client.notify('later.job', { tag }, { notBefore: at }));
  }
  for (let i = 0; i < 5; i++) {
    const tag = `c${i}`;
    const at = sentAt + 21_000 + i * 700;
    due.set(tag, at);
    // Answered to nobody: the caller is gone by then. Only the run is checked.
    client.call('later.run', { tag }, { notBefore: at }).catch(() => undefined);
  }
  await Promise.all(sends);
  // A `warren call --in` process, killed while it waits for its answer: its call is RabbitMQ's already.
  const cliDue = Date.now() + 20_000;
  due.set('cli', cliDue);
  const cli = spawn(process.execPath, [path.join(repoRoot, 'libs', 'cli', 'bin', 'warren.js'), 'call', 'later.run', '{"tag":"cli"}', '--at', new Date(cliDue).toISOString(), '--timeout', '60000'], {
    cwd: repoRoot,
    env: { ...process.env, AMQP_URL: amqpUrl(), WARREN_NAMESPACE: ns.namespace, WARREN_GATEWAY: 'off', NO_COLOR: '1' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let cliErr = '';
  cli.stderr.setEncoding('utf8').on('data', (d: string) => (cliErr += d));
  const cliGone = new Promise<void>((resolve) => cli.on('close', () => resolve()));
  await waitFor(() => cliErr.includes('waiting until'), { timeoutMs: 15_000, message: `the CLI sent its delayed call: ${cliErr}` });
  // Sent is not yet confirmed: wait until the chain holds the CLI's call too (26 messages in its queues).
  await waitFor(async () => (await chainDepth()) >= 26, { timeoutMs: 10_000, message: 'every delayed message in the chain' });
  cli.kill('SIGKILL');
  await cliGone;
  await client.close();

  brokerDown = true;
  await rabbitmqctl(['stop_app']);
  await rabbitmqctl(['start_app']);
  brokerDown = false;

  const w = await worker();
  td.add(() => w.close());
  await waitFor(() => [...due.keys()].every((tag) => started.has(tag)), { timeoutMs: 60_000, intervalMs: 100, message: 'every delayed call ran' });
  for (const [tag, at] of due) {
    const runs = started.get(tag) ?? [];
    expect({ tag, runs: runs.length }).toEqual({ tag, runs: 1 });
    expect({ tag, early: (runs[0] as number) < at }).toEqual({ tag, early: false });
  }
}, 120_000);

/** Messages waiting in the namespace's delay chain, every level. */
async function chainDepth(): Promise<number> {
  let total = 0;
  for (let level = 0; level < 32; level++) total += await queueDepth(ns.names.delayQueue(level));
  return total;
}
