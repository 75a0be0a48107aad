/// <reference lib="dom" />
// The operator's pages of the console (issue 27, "Instances"), in headless Chromium against the
// embedded system: a worker's page (#/workers/<instance>) reached from Services, with its facts
// and running calls linked to their detail; Pause stops it consuming (a new call waits in the queue
// and runs once on Resume), and Cancel all, confirmed, answers each running call -32003.
// Screenshots go to test-artifacts/console/ops/ (the docs' ones are copied to docs/images/ by hand).
import path from 'node:path';
import type { Page } from 'playwright-core';
import { connectClient, startService, type RpcClient } from '@warren/amqp';
import { createMemoryTracker } from '@warren/inflight';
import { ErrorCode, wireErrorOf } from '@warren/jsonrpc';
import { silentLogger } from '@warren/logger';
import { Teardown, waitFor } from '@warren/testkit';
import { startEmbedded, type EmbeddedSystem } from '../../scripts/embedded';
import { artifactsDir } from './chromium';
import { prepareConsole, openBrowser } from './console-page';

jest.setTimeout(120_000);
const td = new Teardown();
const shots = path.join(artifactsDir, 'ops');
const worker = 'reports-1';
let system: EmbeddedSystem;
let client: RpcClient;
let page: Page;
/** How many times each key ran: every call must run exactly once. */
const runs = new Map<string, number>();
const releases = new Map<string, () => void>();

beforeAll(async () => {
  prepareConsole(shots);
  system = await startEmbedded({ GATEWAY_AUTH: 'none', GATEWAY_PORT: '0' }, () => silentLogger(), { instances: [], broker: { defaultMetrics: false, console: { pollMs: 250 } } });
  td.add(() => system.close());
  const reports = await startService({
    connection: system.bus.connect(), name: 'reports', instanceId: worker, prefetch: 8, metadata: { version: '2.4.1' },
    tracker: createMemoryTracker(system.inflight, { heartbeatMs: 200 }),
    methods: {
      'report.render': {
        handler: (p, ctx) => {
          const { key } = p as { key: string };
          runs.set(key, (runs.get(key) ?? 0) + 1);
          ctx.progress(0.3, 'rendering');
          return new Promise<string>((resolve) => {
            releases.set(key, () => resolve(key));
            ctx.signal.addEventListener('abort', () => resolve('aborted'), { once: true });
          });
        },
      },
    },
  });
  td.add(() => reports.close());
  td.add(async () => {
    for (const release of releases.values()) release();
  });
  client = await connectClient({ connection: system.bus.connect(), defaultTimeoutMs: 60_000 });
  td.add(() => client.close());
  page = await (await openBrowser(td)).newPage();
  await waitFor(() => system.broker.gateway.catalogue.current().methods.has('report.render'), { message: 'reports announced' });
});
afterAll(() => td.run());

async function shot(name: string): Promise<void> {
  await page.screenshot({ path: path.join(shots, `${name}.png`), fullPage: false });
}

async function codeOf(p: Promise<unknown>): Promise<number | 'ok'> {
  try {
    await p;
    return 'ok';
  } catch (err) {
    return wireErrorOf(err)?.code ?? -1;
  }
}

test("a worker's page: its facts and calls, Pause keeps a new call queued until Resume, Cancel all (confirmed) answers -32003", async () => {
  const keys = ['r-1', 'r-2', 'r-3'];
  const calls = keys.map((key) => {
    const callId = client.nextCallId();
    return { key, callId, answer: codeOf(client.call('report.render', { key }, { id: callId })) };
  });
  await waitFor(() => keys.every((k) => releases.has(k)), { message: 'three renders running' });

  // From Services, the instance id links to its page.
  await page.goto(`${system.url}/#/services`);
  await page.getByRole('link', { name: worker }).click();
  await page.waitForURL(/#\/workers\/reports-1$/);
  await page.getByRole('heading', { name: `Worker ${worker}` }).waitFor();
  const facts = page.getByLabel('Worker facts');
  await expect(facts.textContent()).resolves.toContain('2.4.1');
  await expect(facts.textContent()).resolves.toContain(`${process.pid}`);
  const rows = page.getByLabel('Calls running on this worker').locator('tbody tr');
  await waitFor(async () => (await rows.count()) === 3, { message: 'three running calls listed' });
  for (const c of calls) await expect(page.locator(`tr[data-call-id="${c.callId}"] a`).getAttribute('href')).resolves.toBe(`#/calls/${encodeURIComponent(c.callId)}`);

  // Pause: the page says so, and a new call waits in the queue instead of running (or failing -32002).
  await page.locator('[data-worker-action="pause"]').click();
  await page.getByText('Pause: applied by the worker.').waitFor();
  await page.locator('[data-worker-action="resume"]').waitFor();
  await page.locator('.sub .badge', { hasText: 'paused' }).waitFor();
  const queued = codeOf(client.call('report.render', { key: 'r-queued' }));
  await waitFor(async () => {
    const body = (await (await fetch(`${system.url}/services`)).json()) as { services: { name: string; queue?: { messages: number } }[] };
    return body.services.find((s) => s.name === 'reports')?.queue?.messages === 1;
  }, { message: 'the new call waits in the queue' });
  expect(runs.has('r-queued')).toBe(false);
  await shot('worker-paused');

  // Cancel all: asked first, naming how many; each caller then gets -32003.
  await page.locator('[data-worker-action="cancel-all"]').click();
  const dialog = page.locator('[data-confirm-worker-action="cancel-all"]');
  await dialog.getByRole('heading', { name: 'Cancel all 3 running calls?' }).waitFor();
  await shot('worker-cancel-all-confirm');
  await dialog.getByRole('button', { name: 'Cancel all' }).click();
  await page.getByText('Cancelled 3 running calls.').waitFor();
  for (const c of calls) await expect(c.answer).resolves.toBe(ErrorCode.Cancelled);

  // Resume: the queued call runs, once.
  await page.locator('[data-worker-action="resume"]').click();
  await page.getByText('Resume: applied by the worker.').waitFor();
  await waitFor(() => releases.has('r-queued'), { message: 'the queued call runs after Resume' });
  releases.get('r-queued')?.();
  await expect(queued).resolves.toBe('ok');
  for (const k of [...keys, 'r-queued']) expect(runs.get(k)).toBe(1);
  await page.getByText('No call running on this worker.').waitFor();
  await shot('worker');
});

test('an unknown worker says so, with a way back', async () => {
  await page.goto(`${system.url}/#/workers/no-such-worker`);
  await page.getByText('No live instance no-such-worker').waitFor();
  await page.getByRole('link', { name: 'All services' }).waitFor();
});
