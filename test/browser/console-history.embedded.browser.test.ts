/// <reference lib="dom" />
// Call detail, search by call id and the outcome history in the console (issue 27), in headless
// Chromium against the embedded system: a running call's detail opens from its id link
// (#/calls/<id>, what every row links to) and follows it to its end; a failed call is found in
// Outcomes by filters written into the link, and its row opens its detail with the error; a pasted
// id (or a pasted link) opens it from the header's search; #/services/<name> shows that service.
// Screenshots go to test-artifacts/console/history/ (the docs' ones are copied to docs/images/ by hand).
import path from 'node:path';
import type { Page } from 'playwright-core';
import { connectClient, type RpcClient } from '@warren/amqp';
import { ErrorCode } from '@warren/jsonrpc';
import { silentLogger } from '@warren/logger';
import { Teardown, waitFor } from '@warren/testkit';
import { startEmbedded, type EmbeddedSystem } from '../../scripts/embedded';
import { artifactsDir } from './chromium';
import { prepareConsole, openBrowser, signIn } from './console-page';

jest.setTimeout(120_000);
const td = new Teardown();
const shots = path.join(artifactsDir, 'history');
const token = 'history-operator-token';
let system: EmbeddedSystem;
let client: RpcClient;
let page: Page;

beforeAll(async () => {
  prepareConsole(shots);
  system = await startEmbedded(
    { GATEWAY_OPERATOR_TOKENS: token, GATEWAY_PORT: '0', JOBS_STEP_MS: '300' },
    () => silentLogger(),
    { instances: [{ name: 'calculator-1', service: 'calculator' }, { name: 'jobs-1', service: 'jobs' }], broker: { defaultMetrics: false, console: { pollMs: 250 } } },
  );
  td.add(() => system.close());
  client = await connectClient({ connection: system.bus.connect(), defaultTimeoutMs: 60_000 });
  td.add(() => client.close());
  page = await (await openBrowser(td)).newPage();
  await waitFor(() => ['calculate', 'report.render'].every((m) => system.broker.gateway.catalogue.current().methods.has(m)), { message: 'services announced' });
  await page.goto(system.url);
  await signIn(page, token);
  await page.getByRole('navigation', { name: 'Views' }).waitFor();
});
afterAll(() => td.run());

async function shot(name: string): Promise<void> {
  await page.screenshot({ path: path.join(shots, `${name}.png`), fullPage: false });
}

/** Follows a link inside the page, as clicking it would (a hash change, no reload). */
async function follow(hash: string): Promise<void> {
  await page.evaluate((h) => {
    location.hash = h;
  }, hash);
}

async function rpc(method: string, params: unknown): Promise<unknown> {
  const res = await fetch(`${system.url}/rpc`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: JSON.stringify({ jsonrpc: '2.0', method, params, id: 1 }) });
  return ((await res.json()) as { result?: unknown }).result;
}

/** A calculate call that fails in its handler (-32602, an expression that does not parse); its call id. */
async function failedCall(): Promise<string> {
  const callId = client.nextCallId();
  await expect(client.call('calculate', { expression: '1+' }, { id: callId })).rejects.toMatchObject({ code: ErrorCode.InvalidParams });
  return callId;
}

test("a running call's detail opens from its id link, shows its params, trace id and progress history, and follows it to its end", async () => {
  const callId = client.nextCallId();
  const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
  const answer = client.call('report.render', { size: 40, title: 'detail' }, { id: callId, traceparent: `00-${traceId}-00f067aa0ba902b7-01` });
  answer.catch(() => undefined);
  // Running in the store (what In flight lists): its row's id link is #/calls/<id>.
  await waitFor(async () => ((await rpc('inflight.list', {})) as { callId: string }[]).some((c) => c.callId === callId), { message: 'the job running' });
  await follow(`#/calls/${callId}`);
  const detail = page.locator('[data-call-state]');
  await page.locator('[data-call-state="running"]').waitFor();
  await detail.getByText('report.render').waitFor();
  await detail.getByText('jobs-1').waitFor();
  await waitFor(async () => (await detail.getByRole('progressbar').count()) > 0, { timeoutMs: 15_000, message: 'progress shown' });
  expect(JSON.parse((await detail.locator('[data-params]').textContent()) ?? '')).toEqual({ size: 40, title: 'detail' });
  expect(await detail.locator('[data-trace-id]').textContent()).toBe(traceId);
  // Every report kept, oldest first, each with its time: the list grows while the job runs.
  await waitFor(async () => (await detail.locator('[data-progress-entry]').count()) >= 2, { timeoutMs: 15_000, message: 'progress history of two reports' });
  const fractions = (await detail.locator('[data-progress-entry] td.num').allTextContents()).map((t) => Number.parseInt(t, 10));
  expect(fractions).toEqual([...fractions].sort((a, b) => a - b));
  await shot('call-running');
  expect(await rpc('inflight.cancel', { callId })).toMatchObject({ outcome: 'signalled' });
  await expect(answer).rejects.toMatchObject({ code: ErrorCode.Cancelled });
  await page.locator('[data-call-state="cancelled"]').waitFor({ timeout: 10_000 });
  await page.getByRole('region', { name: 'Error' }).getByText(String(ErrorCode.Cancelled)).waitFor();
});

test('Outcomes filters live in the link, and a row opens the call with its error', async () => {
  const callId = await failedCall();
  await follow('#/outcomes?method=calculate&state=failures');
  await page.getByRole('heading', { level: 1, name: 'Outcomes' }).waitFor();
  const row = page.locator(`tr[data-call-id="${callId}"]`);
  await row.waitFor({ timeout: 10_000 });
  await row.getByText(String(ErrorCode.InvalidParams)).waitFor();
  // A date is shown, not only a time.
  expect(await row.locator('td').first().textContent()).toMatch(/\d{4}/);
  expect(await page.getByLabel('Method').inputValue()).toBe('calculate');
  // A filter typed in applies, and is written into the link.
  await page.getByLabel('Code').fill(String(ErrorCode.InvalidParams));
  await waitFor(async () => (await page.evaluate(() => location.hash)).includes(`code=${ErrorCode.InvalidParams}`), { message: 'code in the link' });
  await row.waitFor();
  // A code nobody answered: nothing matches.
  await page.getByLabel('Code').fill('-32099');
  await page.locator('p.empty', { hasText: 'No finished calls match' }).waitFor();
  await page.getByLabel('Code').fill(String(ErrorCode.InvalidParams));
  await row.waitFor();
  await shot('outcomes');
  await row.getByRole('link').click();
  await page.locator('[data-call-state="failed"]').waitFor();
  expect(await page.evaluate(() => location.hash)).toBe(`#/calls/${encodeURIComponent(callId)}`);
  await page.getByRole('region', { name: 'Error' }).getByText(String(ErrorCode.InvalidParams)).waitFor();
  await shot('call-failed');
});

test('a hand-typed date or date-time in the link (since=2026-12-04) filters Outcomes; one that is no time is named', async () => {
  const callId = await failedCall();
  const row = page.locator(`tr[data-call-id="${callId}"]`);
  const yesterday = new Date(Date.now() - 86_400_000);
  const day = `${yesterday.getFullYear()}-${String(yesterday.getMonth() + 1).padStart(2, '0')}-${String(yesterday.getDate()).padStart(2, '0')}`;
  await follow(`#/outcomes?method=calculate&since=${day}`);
  await row.waitFor({ timeout: 10_000 });
  expect(await page.locator('input[name="since"]').inputValue()).toBe(`${day}T00:00`);
  // After the call ended: nothing matches (the filter applied, it was not ignored).
  await follow(`#/outcomes?method=calculate&since=${new Date(Date.now() + 3_600_000).toISOString().slice(0, 16)}`);
  await page.locator('p.empty', { hasText: 'No finished calls match' }).waitFor();
  await follow('#/outcomes?since=yesterday');
  await page.getByText('"yesterday" is not a time').waitFor();
  expect(await page.getByText('Invalid time value').count()).toBe(0);
});

test('a pasted call id, or a pasted link to one, opens its detail from the header search', async () => {
  const callId = await failedCall();
  await follow('#/services');
  const search = page.getByRole('search', { name: 'Open a call by id' }).getByLabel('Call id');
  await search.fill(`  ${callId} `);
  await search.press('Enter');
  await page.locator('[data-call-detail-id]').getByText(callId).waitFor();
  await page.locator('[data-call-state="failed"]').waitFor();
  await follow('#/services');
  await search.fill(`${system.url}/#/calls/${encodeURIComponent(callId)}`);
  await search.press('Enter');
  await page.locator('[data-call-state="failed"]').waitFor();
  // An id nobody knows says so.
  await search.fill('no-such-call.1');
  await search.press('Enter');
  await page.getByText('No record of this call in the store').waitFor();
});

test('#/services/<name> shows that one service, and its methods link to their outcomes', async () => {
  await follow('#/services/jobs');
  await page.locator('[data-service="jobs"]').waitFor();
  expect(await page.locator('[data-service="calculator"]').count()).toBe(0);
  await page.getByRole('link', { name: 'All services' }).click();
  await page.locator('[data-service="calculator"]').waitFor();
  const method = page.locator('[data-service="calculator"] [data-method="calculate"]');
  await method.locator('summary').click();
  await method.getByRole('link', { name: 'Outcomes of calculate' }).click();
  await page.getByRole('heading', { level: 1, name: 'Outcomes' }).waitFor();
  expect(await page.getByLabel('Method').inputValue()).toBe('calculate');
});
