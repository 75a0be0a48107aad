// The console in a real headless Chromium (Debian's, driven by playwright-core)
// against a real broker, RabbitMQ and Redis: it loads behind a token, lists the
// example services and methods, shows a running report.render with its
// progress advancing, cancels it, shows a call waiting between attempts as
// retrying, replays a dead-lettered job, and sends a call from the Console view. Each view is saved as a screenshot under
// test-artifacts/console/.
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import amqp from 'amqplib';
import { RetryableError, connectClient, startService, type RpcClient } from '@warren/amqp';
import { startBroker, type Broker } from '../../broker/src';
import { MemoryEventLog } from '@warren/eventlog';
import { InflightView, createRedisTracker, inflightMethods, inflightNotifications, trackQueued } from '@warren/inflight';
import { ErrorCode } from '@warren/jsonrpc';
import { Teardown, amqpUrl, redisUrl, uniqueName, waitFor } from '@warren/testkit';
import { calculatorMethods } from '../../services/calculator/src/methods';
import { completedStream, jobsMethods } from '../../services/jobs/src/methods';
import { TestNamespace, publishRaw } from '../support/amqp';
import { artifactsDir, launchChromium } from './chromium';
import { deleteKeysUnder } from './redis-keys';

jest.setTimeout(120_000);

const root = path.resolve(__dirname, '..', '..');
const token = 'console-test-token';
const td = new Teardown();
const ns = new TestNamespace();
const keyPrefix = uniqueName('console');
const jobsName = ns.service('jobs');
const calculatorName = ns.service('calculator');
const brokerName = ns.service('warren-broker');
const patientName = ns.service('patient');
/** The wait of `patient.serve` between its attempts: long enough to look at it in the In flight view. */
const patientWaitMs = 6000;
const store = new MemoryEventLog();
const jobsPrefix = `${ns.namespace}.${jobsName}`;
let broker: Broker;
let client: RpcClient;
let url: string;
let page: Page;

async function shot(name: string): Promise<void> {
  await page.screenshot({ path: path.join(artifactsDir, `${name}.png`), fullPage: false });
}

/** Opens the console and gives the token, unless an earlier test already did. */
async function login(): Promise<void> {
  if (page.url().startsWith(url) && (await page.getByRole('navigation', { name: 'Views' }).count()) > 0) return;
  await page.goto(url);
  await page.getByLabel('Token').fill(token);
  await page.getByRole('button', { name: 'Open the console' }).click();
  await page.getByRole('navigation', { name: 'Views' }).waitFor();
}

/** Opens a view by its keyboard shortcut, as a user would. */
async function view(key: string, heading: string): Promise<void> {
  await login();
  // Shortcuts work outside form fields: leave the one the last test typed in.
  await page.locator(':focus').evaluateAll((els) => els.forEach((e) => (e as unknown as { blur(): void }).blur()));
  await page.keyboard.press(key);
  await page.getByRole('heading', { level: 1, name: heading }).waitFor();
}

async function progressOf(callId: string): Promise<number | undefined> {
  const bar = page.locator(`tr[data-call-id="${callId}"] [role=progressbar]`);
  if ((await bar.count()) === 0) return undefined;
  return Number(await bar.getAttribute('aria-valuenow'));
}

beforeAll(async () => {
  // The page is served from the built bundle: build it from this checkout's sources.
  execFileSync(process.execPath, [path.join(root, 'broker', 'console', 'build.mjs')], { cwd: root, stdio: 'pipe' });
  mkdirSync(artifactsDir, { recursive: true });
  td.add(() => ns.destroy());
  td.add(() => deleteKeysUnder(keyPrefix));
  const view = new InflightView({ redis: redisUrl(), keyPrefix });
  td.add(() => view.close());
  const tracker = () => createRedisTracker({ redis: redisUrl(), keyPrefix, leaseMs: 3000, heartbeatMs: 500 });
  for (const instanceId of ['calculator-1', 'calculator-2']) {
    const s = await startService({ urls: amqpUrl(), namespace: ns.namespace, name: calculatorName, instanceId, methods: calculatorMethods, tracker: tracker() });
    td.add(() => s.close());
  }
  const jobs = await startService({
    urls: amqpUrl(), namespace: ns.namespace, name: jobsName, instanceId: 'jobs-1', prefetch: 1, tracker: tracker(),
    methods: jobsMethods({ store, prefix: jobsPrefix, stepMs: 300, status: (callId) => view.status(callId) }),
  });
  td.add(() => jobs.close());
  td.add(async () => {
    const model = await amqp.connect(amqpUrl());
    await (await model.createChannel()).deleteQueue(ns.names.retryQueue(patientName, patientWaitMs));
    await model.close();
  });
  const patient = await startService({
    urls: amqpUrl(), namespace: ns.namespace, name: patientName, instanceId: 'patient-1', tracker: tracker(),
    methods: {
      'patient.serve': {
        retry: { attempts: 2, backoffMs: patientWaitMs },
        handler: (_params, ctx) => {
          if (ctx.attempt < 2) throw new RetryableError('come back later');
          return 'served';
        },
      },
    },
  });
  td.add(() => patient.close());
  broker = await startBroker({
    urls: amqpUrl(), namespace: ns.namespace, serviceName: brokerName, port: 0, tokens: [{ token, operator: true }], defaultMetrics: false,
    inflight: { list: () => view.list(), status: (callId) => view.status(callId) },
    serviceMethods: inflightMethods(view), serviceNotifications: inflightNotifications(view),
    console: { pollMs: 250 },
  });
  td.add(() => broker.close());
  trackQueued(broker.client, view);
  url = await broker.listen();
  client = await connectClient({ urls: amqpUrl(), namespace: ns.namespace, defaultTimeoutMs: 60_000 });
  td.add(() => client.close());
  const chrome = await launchChromium();
  td.add(() => chrome.close());
  page = await chrome.context.newPage();
  // The page's own errors go to the test's output: a failing view says why.
  page.on('pageerror', (err) => console.error('page error:', err.message));
  page.on('console', (m) => {
    // The first load's 401 (before the token is given) is expected.
    if (m.type() === 'error' && !m.text().includes('401')) console.error('page console:', m.text());
  });
  await waitFor(() => broker.gateway.catalogue.current().services.length >= 3, { timeoutMs: 15_000, intervalMs: 100, message: 'services announced' });
});

afterAll(() => td.run());

test('the console asks for the token once, then lists the example services, their instances and methods', async () => {
  await login();
  await page.getByRole('heading', { level: 1, name: 'Services' }).waitFor();
  for (const name of [calculatorName, jobsName]) await page.locator(`[data-service="${name}"]`).waitFor();
  const calculator = page.locator(`[data-service="${calculatorName}"]`);
  await calculator.getByText('calculator-2').waitFor();
  for (const m of ['add', 'subtract', 'calculate']) await calculator.locator(`[data-method="${m}"]`).waitFor();
  const render = page.locator(`[data-service="${jobsName}"] [data-method="report.render"]`);
  await render.getByText('Renders a report').waitFor();
  // A method's schema opens from its row.
  await render.locator('summary').click();
  await page.getByLabel('Params schema of report.render').getByText('"size"').waitFor();
  // The token is kept for the tab: a reload does not ask again.
  await page.reload();
  await page.locator(`[data-service="${jobsName}"]`).waitFor();
  await shot('services');
});

/** Starts a report.render through the test's own client and waits for its row in the In flight view. */
async function runningJob(size: number): Promise<{ callId: string; answer: Promise<unknown> }> {
  const callId = client.nextCallId();
  const answer = client.call('report.render', { size, title: 'console' }, { id: callId });
  answer.catch(() => undefined);
  await view('f', 'In flight');
  const row = page.locator(`tr[data-call-id="${callId}"]`);
  await row.waitFor({ timeout: 15_000 });
  await row.getByText('report.render').waitFor();
  await row.getByText('jobs-1').waitFor();
  return { callId, answer };
}

test('Cancel on a running report.render stops it, and Recent outcomes shows it cancelled', async () => {
  const { callId, answer } = await runningJob(40);
  const row = page.locator(`tr[data-call-id="${callId}"]`);
  await shot('inflight');
  await row.getByRole('button', { name: /^Cancel/ }).click();
  await expect(answer).rejects.toMatchObject({ code: ErrorCode.Cancelled });
  await row.waitFor({ state: 'detached', timeout: 15_000 });
  await view('o', 'Recent outcomes');
  await page.locator(`tr[data-call-id="${callId}"]`).getByText('cancelled').waitFor({ timeout: 15_000 });
  await shot('outcomes');
});

test('a running report.render shows its progress advancing in In flight (ctx.progress, issue-13j)', async () => {
  const { callId, answer } = await runningJob(40);
  try {
    await waitFor(async () => ((await progressOf(callId)) ?? 0) > 0, { timeoutMs: 15_000, intervalMs: 100, message: 'progress shown' });
    const first = (await progressOf(callId)) as number;
    await waitFor(async () => ((await progressOf(callId)) ?? 0) > first, { timeoutMs: 15_000, intervalMs: 100, message: 'progress advancing' });
    await shot('inflight');
  } finally {
    // The one jobs worker is free again for the next test, whatever happened here.
    await page.locator(`tr[data-call-id="${callId}"]`).getByRole('button', { name: /^Cancel/ }).click();
    await expect(answer).rejects.toMatchObject({ code: ErrorCode.Cancelled });
  }
});

test('a call waiting in a delay queue between attempts shows in In flight as retrying, then leaves it', async () => {
  const callId = client.nextCallId();
  const answer = client.call('patient.serve', {}, { id: callId });
  await view('f', 'In flight');
  const row = page.locator(`tr[data-call-id="${callId}"]`);
  await row.waitFor({ timeout: patientWaitMs });
  await row.getByText('patient.serve').waitFor();
  await row.getByText(/^retry /).waitFor();
  await shot('inflight-retrying');
  await expect(answer).resolves.toBe('served');
  await row.waitFor({ state: 'detached', timeout: 15_000 });
});

test('a call sent from the Console view shows its answer and timing', async () => {
  await view('c', 'Console');
  await page.getByLabel('Method').selectOption('add');
  await page.getByLabel(/^a/).fill('4');
  await page.getByLabel(/^b/).fill('5');
  await page.getByRole('button', { name: /^Send/ }).click();
  await page.locator('[data-answer]').getByText('9').waitFor();
  expect(await page.locator('[data-timing]').textContent()).toMatch(/\d+(\.\d+)? (ms|s)/);
  // Params the schema refuses come back as the service's -32602, shown as the error.
  await page.getByLabel('Edit params as JSON').check();
  await page.getByLabel('Params (JSON)').fill('{"a": "four", "b": 5}');
  await page.keyboard.press('Control+Enter');
  await page.getByText(`error ${ErrorCode.InvalidParams}`).waitFor();
  await page.getByLabel('Edit params as JSON').uncheck();
  await page.getByLabel(/^a/).fill('40');
  await page.keyboard.press('Control+Enter');
  await page.locator('[data-answer]').getByText('45').waitFor();
  await shot('console');
});

test('the Throughput view charts the calls that went through the gateway', async () => {
  await login();
  for (let i = 0; i < 5; i++) await page.evaluate(async (t) => {
    await fetch('/rpc', { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${t}` }, body: JSON.stringify({ jsonrpc: '2.0', method: 'add', params: [1, 2], id: 1 }) });
  }, token);
  await view('t', 'Throughput');
  await page.locator('[data-method="add"]').waitFor({ timeout: 10_000 });
  await waitFor(async () => Number(await page.locator('[data-method="add"] [data-total]').getAttribute('data-total')) >= 5, { timeoutMs: 10_000, intervalMs: 100, message: 'add counted' });
  await shot('throughput');
});

test('a dead-lettered job is listed, inspected and replayed from the Dead letters view, and then runs', async () => {
  // A report.render request as RabbitMQ dead-letters it: the original body and properties, in the service's dead-letter queue.
  const callId = `${uniqueName('dead')}.1`;
  const body = Buffer.from(JSON.stringify({ jsonrpc: '2.0', method: 'report.render', params: { size: 1, title: 'replayed' }, id: callId }));
  await publishRaw(ns.names.deadLetterExchange, jobsName, body, {
    correlationId: callId, contentType: 'application/json', persistent: true,
    headers: { 'x-warren-deadline': Date.now() + 60_000, 'x-warren-method': 'report.render', 'x-death': [{ count: 1, reason: 'rejected', queue: ns.names.serviceQueue(jobsName), exchange: ns.names.requestExchange, 'routing-keys': ['report.render'] }] },
  });
  await view('d', 'Dead letters');
  await page.getByLabel('Service').selectOption(jobsName);
  const row = page.locator('tr[data-dead-letter]', { hasText: 'report.render' });
  await row.first().waitFor({ timeout: 15_000 });
  await row.first().getByRole('button', { name: /^Inspect/ }).click();
  await page.getByLabel('Dead letter').getByText('replayed').first().waitFor();
  await shot('dead-letters');
  const completions = async (): Promise<number> => (await store.recent(completedStream(jobsPrefix), 100)).length;
  const before = await completions();
  await row.first().getByRole('button', { name: /^Replay/ }).click();
  await page.getByText(/Replay: 1 message/).waitFor({ timeout: 15_000 });
  await page.getByText(`No dead letters for ${jobsName}.`).waitFor({ timeout: 15_000 });
  // The replay is a new call (a new call id) of the same request: the job runs to its end.
  await waitFor(async () => (await completions()) === before + 1, { timeoutMs: 20_000, intervalMs: 100, message: 'the replayed job ran' });
});
