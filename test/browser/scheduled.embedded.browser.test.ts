// The Scheduled view (#/scheduled) in headless Chromium against the embedded system, whose
// schedules live in memory (labelled not durable): a 1-second schedule of calculator's add shows
// its last run, outcome ok and next run; a paused cron schedule shows paused; Pause, Resume and
// Run now act on the named schedule; Delete asks first. The screenshot is test-artifacts/console/
// scheduled/console-scheduled.png (copied to docs/images/ by hand for docs/scheduling.md). /metrics counts the firings.
// The audit service's schedule, defined in code, is listed with its source (service:audit).
import path from 'node:path';
import type { Page } from 'playwright-core';
import { silentLogger } from '@warren/logger';
import { Teardown, waitFor } from '@warren/testkit';
import { startEmbedded, type EmbeddedSystem } from '../../scripts/embedded';
import { artifactsDir } from './chromium';
import { prepareConsole, openBrowser, signIn } from './console-page';

jest.setTimeout(120_000);
const td = new Teardown();
const shots = path.join(artifactsDir, 'scheduled');
const token = 'scheduled-operator-token';
let system: EmbeddedSystem;
let page: Page;

async function rpc(method: string, params: unknown): Promise<{ result?: unknown; error?: { code: number } }> {
  const res = await fetch(`${system.url}/rpc`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: JSON.stringify({ jsonrpc: '2.0', method, params, id: 1 }) });
  return (await res.json()) as { result?: unknown; error?: { code: number } };
}

beforeAll(async () => {
  prepareConsole(shots);
  system = await startEmbedded({ GATEWAY_OPERATOR_TOKENS: token, GATEWAY_PORT: '0' }, () => silentLogger(), {
    // audit defines a schedule in code (docs/scheduling.md, "Schedules in code").
    instances: [{ name: 'calculator-1', service: 'calculator' }, { name: 'audit', service: 'audit' }],
    broker: { defaultMetrics: false },
  });
  td.add(() => system.close());
  await waitFor(() => system.broker.gateway.catalogue.current().methods.has('add'), { message: 'calculator announced' });
  expect(await rpc('schedule.add', { name: 'add-every-second', method: 'add', params: [2, 3], everyMs: 1000 })).toHaveProperty('result');
  expect(await rpc('schedule.add', { name: 'nightly-report', method: 'add', params: [40, 2], cron: '0 2 * * *', timezone: 'Europe/Berlin', catchUp: 'last', paused: true })).toHaveProperty('result');
  page = await (await openBrowser(td)).newPage();
});
afterAll(() => td.run());

const row = (name: string) => page.locator(`tr[data-schedule="${name}"]`);

test('lists schedules with last run, outcome, next run and paused state, labelled not durable', async () => {
  await page.goto(`${system.url}/#/scheduled`);
  await signIn(page, token);
  await page.getByRole('heading', { level: 1, name: 'Schedules' }).waitFor();
  await page.getByText('Not durable: these schedules').waitFor();
  // The audit service defines one in code: listed with where it came from.
  await row('audit.daily-check').getByText('service:audit').waitFor();
  await row('add-every-second').locator('td[data-outcome="ok"]').waitFor({ timeout: 15_000 });
  await row('add-every-second').getByText(/^in /).waitFor();
  await row('nightly-report').getByText('paused').first().waitFor();
  expect(await row('nightly-report').getByText('0 2 * * * (Europe/Berlin)').count()).toBe(1);
  await page.screenshot({ path: path.join(shots, 'console-scheduled.png'), fullPage: false });
  // /metrics counts the firings by schedule (Prometheus conventions: counters end in _total, every series shows).
  const metrics = await (await fetch(`${system.url}/metrics`)).text();
  expect(Number(/^warren_schedule_fired_total\{schedule="add-every-second"\} (\d+)$/m.exec(metrics)?.[1])).toBeGreaterThanOrEqual(1);
  expect(metrics).toMatch(/^# TYPE warren_schedule_missed_total counter$/m);
  expect(metrics).toMatch(/^# TYPE warren_schedule_skipped_total counter$/m);
});

test('pause, resume and run now act on the named schedule', async () => {
  await row('add-every-second').getByRole('button', { name: 'Pause add-every-second' }).click();
  await page.locator('tr[data-schedule="add-every-second"][data-paused="true"]').waitFor();
  await row('nightly-report').getByRole('button', { name: 'Resume nightly-report' }).click();
  await page.locator('tr[data-schedule="nightly-report"][data-paused="false"]').waitFor();
  await row('nightly-report').getByRole('button', { name: 'Run nightly-report now' }).click();
  await page.getByText(/Run now nightly-report: done \(call /).waitFor();
  await row('nightly-report').getByText('(run now)').waitFor();
  await row('nightly-report').locator('td[data-outcome="ok"]').waitFor();
  const listed = (await rpc('schedule.list', {})).result as { items: { name: string; paused: boolean; source: string }[] };
  expect(listed.items.filter((i) => i.source === 'runtime').map((i) => [i.name, i.paused])).toEqual([['add-every-second', true], ['nightly-report', false]]);
});

test('delete asks first, then removes only that schedule', async () => {
  await row('add-every-second').getByRole('button', { name: 'Delete add-every-second' }).click();
  expect(await row('add-every-second').count()).toBe(1);
  await row('add-every-second').getByRole('button', { name: 'Confirm delete of add-every-second' }).click();
  await waitFor(async () => (await row('add-every-second').count()) === 0, { message: 'row gone' });
  expect(await row('nightly-report').count()).toBe(1);
});
