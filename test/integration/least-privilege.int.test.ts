// Least privilege on the bus (docs/security.md): one RabbitMQ user per process on a vhost of its own,
// with the permissions permissionsFor() derives from the naming scheme, and a member of the bus that
// tries to answer someone else's calls.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import amqp from 'amqplib';
import { connectClient, names, permissionsFor, startService, type RpcClient } from '@warren/amqp';
import { replyUsersOf } from '../../libs/amqp/src/engine/reply-users';
import { setPermissionsArgs, type Role } from '../../libs/amqp/src/wire/permissions';
import { progressOf, type Progress } from '@warren/calls';
import { Teardown, amqpUrl, uniqueName, waitFor } from '@warren/testkit';
import { calculatorService } from '../../services/calculator/src/service';
import { startBroker } from '../../broker/src/broker';
import { silentLogger } from '@warren/logger';
import { TestNamespace } from '../support/amqp';

const run = promisify(execFile);
const rabbitmqctl = async (...args: string[]): Promise<void> => void (await run('rabbitmqctl', ['-q', ...args]));

/** A gate a handler waits on, so the test decides when the genuine answer goes out (no sleeps). */
function gate(): { wait: Promise<void>; open: () => void; entered: number; enter: () => Promise<void> } {
  let open!: () => void;
  const wait = new Promise<void>((resolve) => (open = resolve));
  const g = { wait, open, entered: 0, enter: async () => {
    g.entered++;
    await wait;
  } };
  return g;
}

/**
 * The forger: a member of the bus that serves `mallory.see` with raw amqplib, as any process with a
 * service's permissions can, and so learns the reply queue and call id of whoever calls it. `forge`
 * then publishes a reply and a progress report for `callIds` to that reply queue.
 */
async function startForger(td: Teardown, url: string, namespace: string): Promise<{ seen: Promise<amqp.ConsumeMessage>; forge: (replyTo: string, callIds: readonly string[], userId?: string) => Promise<void>; model: amqp.ChannelModel }> {
  const n = names(namespace);
  const model = await amqp.connect(url);
  td.add(() => model.close().catch(() => undefined));
  const ch = await model.createChannel();
  await ch.assertQueue(n.serviceQueue('mallory'), { durable: true });
  await ch.bindQueue(n.serviceQueue('mallory'), n.requestExchange, 'mallory.see');
  const seen = new Promise<amqp.ConsumeMessage>((resolve) => void ch.consume(n.serviceQueue('mallory'), (msg) => msg && resolve(msg), { noAck: true }));
  const forge = async (replyTo: string, callIds: readonly string[], userId?: string): Promise<void> => {
    const out = await model.createConfirmChannel();
    // A refused publish (a user_id not the publisher's) closes the channel: the rejection below says so.
    out.on('error', () => undefined);
    try {
      for (const correlationId of callIds) {
        const progress: Progress = progressOf(0.99, 'forged', Date.now());
        out.publish('', replyTo, Buffer.from(JSON.stringify(progress)), { correlationId, contentType: 'application/json', headers: { 'x-warren-progress': 1 }, ...(userId === undefined ? {} : { userId }) });
        out.publish('', replyTo, Buffer.from(JSON.stringify({ jsonrpc: '2.0', result: 'forged', id: 1 })), { correlationId, contentType: 'application/json', ...(userId === undefined ? {} : { userId }) });
      }
      await out.waitForConfirms();
    } finally {
      await out.close().catch(() => undefined);
    }
  };
  return { seen, forge, model };
}

/** The reports service: `reports.make` reports progress, then waits for the test's gate before answering 'genuine'. */
function reportsOptions(namespace: string, g: ReturnType<typeof gate>) {
  return {
    namespace, name: 'reports', logger: silentLogger(),
    methods: { 'reports.make': { handler: async (_p: unknown, ctx: { progress(f: number, m?: string): void }) => {
      ctx.progress(0.5, 'genuine');
      await g.enter();
      return 'genuine';
    } } },
  };
}

describe('one RabbitMQ user per process (per-service permissions from permissionsFor)', () => {
  const td = new Teardown();
  const vhost = uniqueName('warren-lp');
  const namespace = 'warren';
  const base = new URL(amqpUrl());
  const users = new Map<string, { user: string; url: string }>();
  const roles: Record<string, Omit<Role, 'clientIdPrefix'>> = {
    calculator: { service: 'calculator' },
    reports: { service: 'reports' },
    mallory: { service: 'mallory' },
    web: { delayed: true },
    broker: { service: 'warren-broker', discovery: true, deadLetters: true, delayed: true },
  };

  beforeAll(async () => {
    await rabbitmqctl('add_vhost', vhost);
    td.add(() => rabbitmqctl('delete_vhost', vhost));
    for (const [role, spec] of Object.entries(roles)) {
      const user = `${vhost}-${role}`;
      const password = randomBytes(12).toString('hex');
      await rabbitmqctl('add_user', user, password);
      td.add(() => rabbitmqctl('delete_user', user));
      await rabbitmqctl(...setPermissionsArgs(vhost, user, permissionsFor(names(namespace), { ...spec, clientIdPrefix: user })));
      const url = new URL(base.href);
      url.username = user;
      url.password = password;
      url.pathname = `/${encodeURIComponent(vhost)}`;
      users.set(role, { user, url: url.href });
    }
  }, 180_000);
  afterAll(() => td.run(), 180_000);

  const as = (role: string): { user: string; url: string } => users.get(role) ?? { user: '', url: '' };

  it('runs the services under their own users, refuses what they do not own, and drops every forged reply and progress', async () => {
    const local = new Teardown();
    try {
      const calculator = await startService({ urls: as('calculator').url, ...calculatorService({ namespace, name: 'calculator', prefetch: 8, instanceId: 'calc-1' }, { logger: silentLogger() }), userId: as('calculator').user, client: { clientIdPrefix: as('calculator').user } });
      local.add(() => calculator.close());
      const g = gate();
      const reports = await startService({ urls: as('reports').url, ...reportsOptions(namespace, g), userId: as('reports').user, client: { clientIdPrefix: as('reports').user } });
      local.add(() => reports.close());
      const forger = await startForger(local, as('mallory').url, namespace);
      const web: RpcClient = await connectClient({
        urls: as('web').url, namespace, clientIdPrefix: as('web').user,
        replyUsers: replyUsersOf({
          calculator: { user: as('calculator').user, methods: ['add', 'subtract', 'sum', 'get_data', 'calculate'] },
          reports: { user: as('reports').user, methods: ['reports.make'] },
          broker: { user: as('broker').user, methods: ['dlq.list'] },
        }),
      });
      local.add(() => web.close());
      // The broker as its own user: its gateway relays calls, its service reads every dead-letter queue.
      const broker = await startBroker({ urls: as('broker').url, namespace, userId: as('broker').user, port: 0, defaultMetrics: false, announceIntervalMs: 3_600_000 });
      local.add(() => broker.close());
      const gateway = await broker.listen();

      // The services answer their callers, directly and through the gateway.
      expect(await web.call('add', [4, 5])).toBe(9);
      const relayed = await fetch(new URL('/rpc', gateway), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', method: 'add', params: [4, 5], id: 1 }) });
      expect(await relayed.json()).toEqual({ jsonrpc: '2.0', result: 9, id: 1 });
      expect(await web.call('dlq.list', { service: 'calculator' })).toEqual({ total: 0, items: [] });
      // A delayed call with the delay chain's permissions (`delayed`), directly and through the gateway.
      expect(await web.call('add', [1, 2], { delayMs: 300 })).toBe(3);
      const later = await fetch(new URL('/rpc', gateway), { method: 'POST', headers: { 'content-type': 'application/json', 'x-delay-ms': '300' }, body: JSON.stringify({ jsonrpc: '2.0', method: 'add', params: [2, 2], id: 2 }) });
      expect(await later.json()).toEqual({ jsonrpc: '2.0', result: 4, id: 2 });

      // Nobody reads what is not theirs: 403 ACCESS_REFUSED closes the channel.
      const consume = async (role: string, queue: string): Promise<unknown> => {
        const model = await amqp.connect(as(role).url);
        try {
          const ch = await model.createChannel();
          ch.on('error', () => undefined);
          return await ch.consume(queue, () => undefined).then(() => 'consumed', (err: { code?: number }) => err.code);
        } finally {
          await model.close().catch(() => undefined);
        }
      };
      const n = names(namespace);
      expect(await consume('mallory', n.serviceQueue('calculator'))).toBe(403);
      expect(await consume('reports', n.serviceQueue('calculator'))).toBe(403);
      expect(await consume('mallory', web.replyQueue)).toBe(403);
      expect(await consume('web', n.serviceQueue('reports'))).toBe(403);

      // The forger sees one request from web, and with it web's reply queue and a call id.
      await web.call('mallory.see', [], { timeoutMs: 2000 }).catch(() => undefined);
      const seen = await forger.seen;
      const replyTo = seen.properties.replyTo as string;
      expect(replyTo).toBe(web.replyQueue);

      // Worst case: it even knows the id of web's next call (nextCallId shows it). Its reply and
      // progress for that call, to another service, arrive while the genuine one waits at the gate.
      const progress: Progress[] = [];
      const callId = web.nextCallId();
      const made = web.call('reports.make', [], { onProgress: (p) => progress.push(p), timeoutMs: 20_000 });
      await waitFor(() => g.entered === 1, { timeoutMs: 10_000 });
      await forger.forge(replyTo, [callId]);
      await waitFor(() => web.stats().untrustedReplies === 2, { timeoutMs: 10_000, message: 'the forged reply and progress reached web and were dropped' });

      // Nor can it pass as the reports service: RabbitMQ refuses a user_id that is not the publisher's.
      await expect(forger.forge(replyTo, [callId], as('reports').user)).rejects.toThrow();

      g.open();
      expect(await made).toBe('genuine');
      expect(progress.map((p) => p.message)).toEqual(['genuine']);
      // A calculator call after the forgery still gets its own answer.
      expect(await web.call('add', [20, 22])).toBe(42);
      expect(web.stats().untrustedReplies).toBe(2);
    } finally {
      await local.run();
    }
  }, 60_000);
});

describe('one user for everyone: random call ids alone leave nothing to predict', () => {
  const td = new Teardown();
  const ns = new TestNamespace();
  afterAll(async () => {
    await td.run();
    await ns.destroy();
  });

  it('drops forged replies to guessed ids; the calls get the genuine answers', async () => {
    const g = gate();
    const reports = await startService({ urls: amqpUrl(), ...reportsOptions(ns.namespace, g), name: ns.service('reports') });
    td.add(() => reports.close());
    ns.service('mallory');
    const forger = await startForger(td, amqpUrl(), ns.namespace);
    const web = await connectClient({ urls: amqpUrl(), namespace: ns.namespace });
    td.add(() => web.close());

    await web.call('mallory.see', [], { timeoutMs: 2000 }).catch(() => undefined);
    const seen = await forger.seen;
    const seenId = seen.properties.correlationId as string;
    const replyTo = seen.properties.replyTo as string;

    const made = web.call('reports.make', [], { timeoutMs: 20_000 });
    await waitFor(() => g.entered === 1, { timeoutMs: 10_000 });
    // The guesses: the seen id with its tail read as a counter (the old `<clientId>.<n base36>`) and
    // advanced, and the seen id itself with its last character changed.
    const dot = seenId.lastIndexOf('.');
    const head = seenId.slice(0, dot);
    const counter = Number.parseInt(seenId.slice(dot + 1), 36);
    const guesses = [
      ...Array.from({ length: 20 }, (_v, i) => `${head}.${((Number.isSafeInteger(counter) ? counter : 0) + i + 1).toString(36)}`),
      ...['A', 'B', 'w', '0', '_', '-'].map((c) => `${seenId.slice(0, -1)}${c}`),
    ];
    const lateBefore = web.stats().lateReplies;
    await forger.forge(replyTo, guesses);
    // Every forged reply reached web and matched no call (progress for an unknown id is dropped silently).
    await waitFor(() => web.stats().lateReplies - lateBefore === guesses.length, { timeoutMs: 10_000 });
    g.open();
    expect(await made).toBe('genuine');
  }, 60_000);
});
