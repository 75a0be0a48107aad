// The console's browser tests, for any system that runs the example services behind a broker:
// console.browser.test.ts runs them on RabbitMQ and Redis, console.embedded.browser.test.ts on the
// embedded system (one process, in memory). In a real headless Chromium (Debian's, driven by
// playwright-core): it loads behind a token, lists the example services and methods, shows a
// running report.render with its progress advancing, cancels it, replays a dead-lettered job, and
// sends a call from the Console view. Each view is saved as a screenshot under
// test-artifacts/console/<variant>/.
import path from 'node:path';
import type { Page } from 'playwright-core';
import { RetryableError, type Names, type RpcClient } from '@warren/amqp';
import type { EventStore } from '@warren/eventlog';
import { ErrorCode } from '@warren/jsonrpc';
import { Teardown, uniqueName, waitFor } from '@warren/testkit';
import { completedStream } from '../../services/jobs/src/methods';
import { artifactsDir } from './chromium';
import { prepareConsole, openBrowser, signIn } from './console-page';

/** What the tests need of a running system. */
export interface ConsoleSystem {
  /** What the console must say it runs on: an embedded system is labelled not durable. */
  readonly mode: 'rabbitmq' | 'embedded';
  /** The gateway's base URL. */
  readonly url: string;
  /** An operator token the gateway accepts. */
  readonly token: string;
  /** A client of the same system, for calls the tests start themselves. */
  readonly client: RpcClient;
  readonly names: Names & { readonly namespace: string };
  readonly calculatorName: string;
  /** One jobs worker, instance `jobs-1`, with 300 ms steps. */
  readonly jobsName: string;
  /** Where the jobs service records finished jobs. */
  readonly store: EventStore;
  /** Publishes a message as it is, past Warren's client (a dead letter as RabbitMQ leaves it). */
  publishRaw(exchange: string, routingKey: string, body: Buffer, props: { correlationId: string; contentType: string; persistent: boolean; headers: Record<string, unknown> }): Promise<void>;
  /** The broker's catalogue size, to wait for the services' announcements. */
  services(): number;
  /** A tracked method whose first attempt fails with a retryable error, retried after `waitMs` in a delay queue. */
  readonly patient: { readonly method: string; readonly waitMs: number };
}

/** The handler of {@link ConsoleSystem.patient}: attempt 1 fails retryably, attempt 2 answers 'served'. */
export const patientHandler = (_params: unknown, ctx: { readonly attempt: number }): string => {
  if (ctx.attempt < 2) throw new RetryableError('come back later');
  return 'served';
};

/** Registers the suite; `start` brings the system up (its teardown goes on `td`). */
export function consoleSuite(variant: string, start: (td: Teardown) => Promise<ConsoleSystem>): void {
  jest.setTimeout(120_000);
  const td = new Teardown();
  const shots = path.join(artifactsDir, variant);
  let sys: ConsoleSystem;
  let url: string;
  let token: string;
  let calculatorName: string;
  let jobsName: string;
  let page: Page;

  async function shot(name: string): Promise<void> {
    await page.screenshot({ path: path.join(shots, `${name}.png`), fullPage: false });
  }

  /** Opens the console and gives the token, unless an earlier test already did. */
  async function login(): Promise<void> {
    if (page.url().startsWith(url) && (await page.getByRole('navigation', { name: 'Views' }).count()) > 0) return;
    await page.goto(url);
    await signIn(page, token);
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
    prepareConsole(shots);
    sys = await start(td);
    ({ url, token, calculatorName, jobsName } = sys);
    // The page's own errors go to the test's output (openBrowser): a failing view says why.
    page = await (await openBrowser(td)).newPage();
    page.on('console', (m) => {
      // The first load's 401 (before the token is given) is expected.
      if (m.type() === 'error' && !m.text().includes('401')) console.error('page console:', m.text());
    });
    await waitFor(() => sys.services() >= 3, { timeoutMs: 15_000, intervalMs: 100, message: 'services announced' });
  });

  afterAll(() => td.run());

  test('the console asks for the token once, then lists the example services, their instances and methods', async () => {
    await login();
    await page.getByRole('heading', { level: 1, name: 'Services' }).waitFor();
    for (const name of [calculatorName, jobsName]) await page.locator(`[data-service="${name}"]`).waitFor();
    const label = page.getByRole('note').filter({ hasText: 'embedded: in memory, not durable' });
    if (sys.mode === 'embedded') await label.waitFor();
    else expect(await label.count()).toBe(0);
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
    const callId = sys.client.nextCallId();
    const answer = sys.client.call('report.render', { size, title: 'console' }, { id: callId });
    answer.catch(() => undefined);
    await view('f', 'In flight');
    const row = page.locator(`tr[data-call-id="${callId}"]`);
    await row.waitFor({ timeout: 15_000 });
    await row.getByText('report.render').waitFor();
    await row.getByText('jobs-1', { exact: true }).waitFor();
    return { callId, answer };
  }

  /** Cancel on the call's row, then the confirmation, which names the call by id. */
  async function cancelConfirmed(callId: string): Promise<void> {
    await page.locator(`tr[data-call-id="${callId}"]`).getByRole('button', { name: /^Cancel/ }).click();
    await page.getByRole('alertdialog').getByRole('button', { name: `Cancel call ${callId}` }).click();
  }

  test('Cancel on a running report.render stops it, and Outcomes shows it cancelled', async () => {
    const { callId, answer } = await runningJob(40);
    const row = page.locator(`tr[data-call-id="${callId}"]`);
    await shot('inflight');
    await cancelConfirmed(callId);
    await expect(answer).rejects.toMatchObject({ code: ErrorCode.Cancelled });
    await row.waitFor({ state: 'detached', timeout: 15_000 });
    await view('o', 'Outcomes');
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
      await cancelConfirmed(callId);
      await expect(answer).rejects.toMatchObject({ code: ErrorCode.Cancelled });
    }
  });

  test('a call an AMQP caller sent (trackQueued) shows in In flight as queued while it waits in RabbitMQ, then as running', async () => {
    // The one jobs worker (prefetch 1) is busy, so the next job waits in the queue.
    const first = await runningJob(40);
    const callId = sys.client.nextCallId();
    const answer = sys.client.call('report.render', { size: 40, title: 'queued' }, { id: callId });
    answer.catch(() => undefined);
    const row = page.locator(`tr[data-call-id="${callId}"]`);
    try {
      await row.locator('.col-worker').getByText('queued', { exact: true }).waitFor({ timeout: 15_000 });
      await row.getByText('report.render').waitFor();
      await shot('inflight-queued');
      await cancelConfirmed(first.callId);
      await expect(first.answer).rejects.toMatchObject({ code: ErrorCode.Cancelled });
      await row.getByText('jobs-1', { exact: true }).waitFor({ timeout: 15_000 });
    } finally {
      await cancelConfirmed(callId);
      await expect(answer).rejects.toMatchObject({ code: ErrorCode.Cancelled });
    }
  });

  test('a call waiting in a delay queue between attempts shows in In flight as retrying, then leaves it', async () => {
    const { method, waitMs } = sys.patient;
    const callId = sys.client.nextCallId();
    const answer = sys.client.call(method, {}, { id: callId });
    await view('f', 'In flight');
    const row = page.locator(`tr[data-call-id="${callId}"]`);
    await row.waitFor({ timeout: waitMs });
    await row.getByText(method).waitFor();
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
    // The editor starts from what the form held, already as it appears (what is typed next is kept).
    expect(JSON.parse(await page.getByLabel('Params (JSON)').inputValue())).toEqual({ a: 4, b: 5 });
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
    await sys.publishRaw(sys.names.deadLetterExchange, jobsName, body, {
      correlationId: callId, contentType: 'application/json', persistent: true,
      headers: { 'x-warren-deadline': Date.now() + 60_000, 'x-warren-method': 'report.render', 'x-death': [{ count: 1, reason: 'rejected', queue: sys.names.serviceQueue(jobsName), exchange: sys.names.requestExchange, 'routing-keys': ['report.render'] }] },
    });
    await view('d', 'Dead letters');
    await page.getByLabel('Service').selectOption(jobsName);
    const row = page.locator('tr[data-dead-letter]', { hasText: 'report.render' });
    await row.first().waitFor({ timeout: 15_000 });
    await row.first().getByRole('button', { name: /^Inspect/ }).click();
    await page.getByLabel('Dead letter').getByText('replayed').first().waitFor();
    await shot('dead-letters');
    const completions = async (): Promise<number> => (await sys.store.recent(completedStream(`${sys.names.namespace}.${jobsName}`), 100)).length;
    const before = await completions();
    await row.first().getByRole('button', { name: /^Replay/ }).click();
    await page.getByText(/Replay: 1 message/).waitFor({ timeout: 15_000 });
    await page.getByText(`No dead letters for ${jobsName}.`).waitFor({ timeout: 15_000 });
    // The replay is a new call (a new call id) of the same request: the job runs to its end.
    await waitFor(async () => (await completions()) === before + 1, { timeoutMs: 20_000, intervalMs: 100, message: 'the replayed job ran' });
  });
}
