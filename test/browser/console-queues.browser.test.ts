/// <reference lib="dom" />
// The queue made visible and dead-letter triage (issue 27), in headless Chromium against a broker on
// the real RabbitMQ: Services shows a service's queue columns (ready, unacked, consumers, rates,
// retrying, dead letters) and says they come from the management API (or, without it, from passive
// declares); Dead letters filters by reason and method (kept in the link), shows a letter's AMQP
// properties and headers with dates, and replays several selected letters after a confirmation,
// each new call id linked to its detail. The management half needs rabbitmq_management
// (RABBITMQ_MANAGEMENT_URL, default http://guest:guest@127.0.0.1:15672); without it, the passive
// figures are checked instead. Screenshots: test-artifacts/console/queues/.
import path from 'node:path';
import type { Page } from 'playwright-core';
import { RetryableError, connectClient, startService, type RpcClient } from '@warren/amqp';
import { Teardown, amqpUrl, waitFor } from '@warren/testkit';
import { startBroker } from '../../broker/src';
import { TestNamespace, publishRaw } from '../support/amqp';
import { artifactsDir } from './chromium';
import { prepareConsole, openBrowser } from './console-page';

jest.setTimeout(120_000);
const td = new Teardown();
const shots = path.join(artifactsDir, 'queues');
const ns = new TestNamespace();
const service = ns.service('billing');
const retryWaitMs = 600_000;
const managementUrl = process.env['RABBITMQ_MANAGEMENT_URL'] ?? 'http://guest:guest@127.0.0.1:15672';
const releases: (() => void)[] = [];
/** Runs per key of `billing.charge`: each replayed letter must run exactly once more. */
const runs = new Map<string, number>();
let healed = false;
let management = false;
let url: string;
let client: RpcClient;
let page: Page;

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

beforeAll(async () => {
  prepareConsole(shots);
  td.add(() => ns.destroy());
  for (const ms of [100, retryWaitMs]) ns.queue(ns.names.retryQueue(service, ms));
  management = await managementAnswers();
  if (!management) console.warn('management API not reachable: the queue columns are checked from passive declares only');
  const broker = await startBroker({
    urls: amqpUrl(), namespace: ns.namespace, serviceName: ns.service('warren-broker'), port: 0, defaultMetrics: false, console: { pollMs: 250 },
    ...(management ? { rabbitmqManagement: { url: managementUrl } } : {}),
  });
  td.add(() => broker.close());
  url = await broker.listen();
  const worker = await startService({
    urls: amqpUrl(), namespace: ns.namespace, name: service, instanceId: 'billing-1', prefetch: 2,
    methods: {
      // Held until the replays need the worker's prefetch (healed).
      'billing.hold': { handler: () => (healed ? 'released' : new Promise((resolve) => releases.push(() => resolve('released')))) },
      'billing.later': { retry: { attempts: 2, backoffMs: retryWaitMs }, handler: () => { throw new RetryableError('later'); } },
      'billing.charge': {
        retry: { attempts: 2, backoffMs: 100 },
        handler: (p) => {
          const { key } = p as { key: string };
          runs.set(key, (runs.get(key) ?? 0) + 1);
          if (!healed) throw new RetryableError('card service down');
          return key;
        },
      },
    },
  });
  td.add(() => worker.close());
  td.add(async () => {
    for (const release of releases) release();
  });
  client = await connectClient({ urls: amqpUrl(), namespace: ns.namespace, defaultTimeoutMs: 1_200_000 });
  td.add(() => client.close());
  // Dead letters: three charges that failed every attempt, and a body nobody can read.
  await Promise.all(['c-1', 'c-2', 'c-3'].map((key) => client.call('billing.charge', { key }, { timeoutMs: 10_000 }).catch(() => undefined)));
  await publishRaw(ns.names.requestExchange, 'billing.charge', Buffer.from('not json'), { correlationId: 'junk-1', messageId: 'm-1' });
  // A retry waiting out its backoff, two calls running (the prefetch) and three waiting, all from an AMQP caller.
  void client.call('billing.later', []).catch(() => undefined);
  for (let i = 0; i < 5; i++) void client.call('billing.hold', []).catch(() => undefined);
  await waitFor(() => releases.length === 2, { message: 'two calls running' });
  page = await (await openBrowser(td)).newPage();
});
afterAll(() => td.run());

async function shot(name: string): Promise<void> {
  await page.screenshot({ path: path.join(shots, `${name}.png`), fullPage: false });
}

test("Services shows the queue's columns and where they come from", async () => {
  await page.goto(`${url}/#/services`);
  const table = page.locator(`[data-queue="${service}"]`);
  const fig = async (name: string): Promise<string> => (await table.locator(`[data-fig="${name}"]`).textContent()) ?? '';
  await page.locator(`[data-queue-source="${management ? 'management' : 'amqp'}"]`).waitFor();
  // RabbitMQ's statistics refresh every few seconds; the page polls /services.
  await waitFor(async () => (await fig('ready')) === '3' && (await fig('consumers')) === '1' && (await fig('dead')) === '4' && (!management || ((await fig('unacked')) === '2' && (await fig('retry')) === '1')), { timeoutMs: 30_000, intervalMs: 250, message: 'the queue figures' });
  expect(await fig('consumers')).toBe('1');
  if (management) expect(await fig('publish')).toMatch(/\/s$/);
  else expect(await fig('unacked')).toBe('–');
  await shot('services-queue');
});

test('Dead letters: filter by reason and method (in the link), AMQP side with dates, multi-select replay confirmed, new ids linked', async () => {
  await page.goto(`${url}/#/dead-letters?service=${service}`);
  const rows = page.locator('tr[data-dead-letter]');
  await waitFor(async () => (await rows.count()) === 4, { message: 'four dead letters' });
  await page.getByLabel('Reason').selectOption('retries_exhausted');
  await waitFor(async () => (await rows.count()) === 3, { message: 'three exhausted' });
  expect(decodeURIComponent(page.url())).toContain(`#/dead-letters?service=${service}&reason=retries_exhausted`);
  await page.getByLabel('Method').selectOption('billing.charge');
  await waitFor(async () => (await rows.count()) === 3, { message: 'three charges' });
  // A date, not only a time.
  await expect(rows.first().locator('td').nth(1).textContent()).resolves.toMatch(/^\d{2,4}\D\d{2}\D\d{2,4} \d{2}:\d{2}:\d{2}$/);

  // The unreadable one, opened by its link: properties and headers.
  await page.goto(`${url}/#/dead-letters?service=${service}&reason=unservable`);
  await waitFor(async () => (await rows.count()) === 1, { message: 'the unservable one' });
  await rows.first().getByRole('button', { name: /^Inspect/ }).click();
  const detail = page.locator('[data-dead-letter-detail]');
  await detail.getByLabel('AMQP properties').getByText('junk-1').waitFor();
  await expect(detail.getByLabel('AMQP headers').textContent()).resolves.toContain('"x-warren-dead-reason": "unservable"');
  // Dates in the headers as ISO text, though amqplib decodes RabbitMQ's timestamps there as {"!": "timestamp", value}.
  const headerText = (await detail.getByLabel('AMQP headers').textContent()) ?? '';
  expect(headerText).not.toContain('"!"');
  if (headerText.includes('"x-death"')) expect(headerText).toMatch(/"time": "\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z"/);
  expect(page.url()).toMatch(/#\/dead-letters\/[^/]+\/[^/?]+\?service=/);
  await shot('dead-letter-detail');

  // Two of the three charges selected, replayed after a confirmation.
  await page.goto(`${url}/#/dead-letters?service=${service}&reason=retries_exhausted`);
  await waitFor(async () => (await rows.count()) === 3, { message: 'three exhausted again' });
  healed = true;
  const chosen = [await rows.nth(0).getAttribute('data-dead-letter'), await rows.nth(1).getAttribute('data-dead-letter')];
  await rows.nth(0).getByRole('checkbox').check();
  await rows.nth(1).getByRole('checkbox').check();
  await page.locator('[data-replay-selected]').click();
  const dialog = page.locator('[data-confirm-replay="2"]');
  await dialog.getByRole('heading', { name: 'Replay 2 dead letters?' }).waitFor();
  await shot('dead-letters-replay-confirm');
  await dialog.getByRole('button', { name: 'Replay 2' }).click();
  await page.getByText('Replay selected: 2 messages').waitFor();
  const links = page.getByLabel('Replayed dead letters').locator('a[data-replayed-call]');
  await waitFor(async () => (await links.count()) === 2, { message: 'two new call ids' });
  for (let i = 0; i < 2; i++) {
    const callId = (await links.nth(i).getAttribute('data-replayed-call')) ?? '';
    expect(callId).toMatch(/^replay\./);
    await expect(links.nth(i).getAttribute('href')).resolves.toBe(`#/calls/${encodeURIComponent(callId)}`);
  }
  await waitFor(async () => (await rows.count()) === 1, { message: 'one left' });
  expect(chosen.every((id) => id !== null)).toBe(true);
  await shot('dead-letters-replayed');
  // The held calls end, so the worker takes the replays; each ran once more (two failed attempts before), the third not at all.
  for (const release of releases) release();
  await waitFor(() => [...runs.values()].filter((n) => n === 3).length === 2, { message: 'the replays ran' });
  expect([...runs.values()].sort()).toEqual([2, 3, 3]);
});

test('Replay on a filtered list replays only the rows shown, after a confirmation naming their count and a sample', async () => {
  // Left from the test above: one exhausted charge and the unservable one.
  const rows = page.locator('tr[data-dead-letter]');
  await page.goto(`${url}/#/dead-letters?service=${service}`);
  await waitFor(async () => (await rows.count()) === 2, { message: 'two dead letters left' });
  const unservable = await page.locator('tr[data-dead-letter]', { hasText: 'unservable' }).getAttribute('data-dead-letter');
  await page.goto(`${url}/#/dead-letters?service=${service}&reason=retries_exhausted`);
  await waitFor(async () => (await rows.count()) === 1, { message: 'one exhausted shown' });
  await page.locator('[data-replay-shown="1"]').click();
  const dialog = page.locator('[data-confirm-replay="1"]');
  await dialog.getByRole('heading', { name: 'Replay 1 dead letter?' }).waitFor();
  await expect(dialog.getByLabel('Dead letters to replay').locator('li').allTextContents()).resolves.toEqual([expect.stringContaining('billing.charge')]);
  await shot('dead-letters-replay-shown-confirm');
  await dialog.getByRole('button', { name: 'Replay 1' }).click();
  await page.getByText('Replay shown: 1 message').waitFor();
  // The letter the filter hid is still there, and only it.
  await page.goto(`${url}/#/dead-letters?service=${service}`);
  await waitFor(async () => (await rows.count()) === 1, { message: 'the hidden one stays' });
  await expect(rows.first().getAttribute('data-dead-letter')).resolves.toBe(unservable);
  await waitFor(() => [...runs.values()].filter((n) => n === 3).length === 3, { message: 'the replay ran' });
});
