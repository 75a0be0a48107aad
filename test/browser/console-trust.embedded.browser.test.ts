/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// The console under load and when things go wrong (issue 27), in headless Chromium against the
// embedded system: with 300+ calls in flight reflowing, Cancel reaches only the call confirmed by
// id; the token prompt tells a client token and a wrong token apart; while the feed is down the
// rows dim, ages stop counting, Cancel is off and a banner says so; at 800 px every view tab and
// In flight's Progress and Cancel are on screen without sideways scrolling. Screenshots go to
// test-artifacts/console/trust/ (the docs' ones are copied to docs/images/ by hand).
import path from 'node:path';
import type { Page } from 'playwright-core';
import { connectClient, startService, type RpcClient } from '@warren/amqp';
import { createMemoryTracker } from '@warren/inflight';
import { ErrorCode } from '@warren/jsonrpc';
import { silentLogger } from '@warren/logger';
import { FaultProxy, Teardown, waitFor } from '@warren/testkit';
import { startEmbedded, type EmbeddedSystem } from '../../scripts/embedded';
import { artifactsDir } from './chromium';
import { prepareConsole, openBrowser, signIn } from './console-page';

jest.setTimeout(180_000);
const td = new Teardown();
const shots = path.join(artifactsDir, 'trust');
const operatorToken = 'trust-operator-token';
const clientToken = 'trust-client-token';
let system: EmbeddedSystem;
let client: RpcClient;
let page: Page;
let newPage: () => Promise<Page>;
/** Every hold call's end: its call id and whether it was cancelled. */
const ends = new Map<string, Promise<'done' | 'cancelled' | 'failed'>>();

beforeAll(async () => {
  prepareConsole(shots);
  system = await startEmbedded(
    { GATEWAY_OPERATOR_TOKENS: operatorToken, GATEWAY_TOKENS: clientToken, GATEWAY_PORT: '0' },
    () => silentLogger(),
    { instances: [{ name: 'calculator-1', service: 'calculator' }], broker: { defaultMetrics: false, console: { pollMs: 250 } } },
  );
  td.add(() => system.close());
  const holder = await startService({
    connection: system.bus.connect(), name: 'holder', instanceId: 'holder-1', prefetch: 1000, tracker: createMemoryTracker(system.inflight, { heartbeatMs: 200 }),
    methods: {
      hold: {
        handler: (p, ctx) => new Promise<string>((resolve) => {
          const timer = setTimeout(() => resolve('held'), (p as { ms: number }).ms);
          ctx.signal.addEventListener('abort', () => {
            clearTimeout(timer);
            resolve('aborted');
          }, { once: true });
        }),
      },
    },
  });
  td.add(() => holder.close());
  client = await connectClient({ connection: system.bus.connect(), defaultTimeoutMs: 120_000 });
  td.add(() => client.close());
  ({ newPage } = await openBrowser(td));
  page = await newPage();
  await waitFor(() => system.broker.gateway.catalogue.current().methods.has('hold'), { message: 'hold announced' });
});
afterAll(async () => {
  await Promise.allSettled([...ends.values()]);
  await td.run();
});

/** Starts `count` hold calls, each ending at a random time between `firstMs` and `firstMs + spreadMs`: rows leave all over the table, and those below move up. */
function holdCalls(count: number, firstMs: number, spreadMs: number): string[] {
  return Array.from({ length: count }, () => {
    const callId = client.nextCallId();
    ends.set(callId, client.call('hold', { ms: firstMs + Math.round(Math.random() * spreadMs) }, { id: callId }).then(
      () => 'done' as const,
      (err: { code?: number }) => (err.code === ErrorCode.Cancelled ? 'cancelled' as const : 'failed' as const),
    ));
    return callId;
  });
}

/** Opens In flight, giving the operator token unless the tab kept it. */
async function login(p: Page, base = system.url): Promise<void> {
  await p.goto(`${base}/#inflight`);
  const nav = p.getByRole('navigation', { name: 'Views' });
  await nav.or(p.getByLabel('Token')).waitFor();
  if ((await nav.count()) === 0) {
    await signIn(p, operatorToken);
    await nav.waitFor();
  }
}

async function shot(p: Page, name: string): Promise<void> {
  await p.screenshot({ path: path.join(shots, `${name}.png`), fullPage: false });
}

test('the token prompt explains client and operator tokens, and says which one was wrong', async () => {
  const p = await newPage();
  await p.goto(system.url);
  await p.getByText('GATEWAY_OPERATOR_TOKENS').first().waitFor();
  await signIn(p, 'not-a-token');
  await p.locator('[data-token-problem="invalid"]').waitFor();
  await shot(p, 'token-invalid');
  await signIn(p, clientToken);
  await p.locator('[data-token-problem="not-operator"]').waitFor();
  await shot(p, 'token-client');
  await signIn(p, operatorToken);
  await p.getByRole('navigation', { name: 'Views' }).waitFor();
  expect(await p.locator('[data-token-problem]').count()).toBe(0);
  await p.close();
});

test('with 300+ rows reflowing, Cancel reaches only the call confirmed by its id', async () => {
  // From 5 s on, ~20 calls a second end, anywhere in the table: the rows below them move up.
  const ids = holdCalls(450, 5000, 20_000);
  await login(page);
  // Rows are windowed (only those in view are in the DOM): the table says how many it lists.
  await waitFor(async () => Number(await page.locator('table[data-rows]').getAttribute('data-rows')) >= 300, { timeoutMs: 30_000, intervalMs: 200, message: '300 rows' });
  const confirmed: string[] = [];
  for (let attempt = 0; attempt < 3; attempt++) {
    await page.locator('tr[data-call-id]').nth(5).getByRole('button', { name: /^Cancel/ }).click();
    const dialog = page.getByRole('alertdialog');
    const id = await dialog.locator('[data-confirm-id]').textContent();
    if (id === null) throw new Error('no call id in the confirmation');
    if (attempt === 0) await shot(page, 'inflight-confirm');
    // The rows keep reflowing under the dialog meanwhile.
    await page.waitForTimeout(600);
    await dialog.getByRole('button', { name: `Cancel call ${id}` }).click();
    confirmed.push(id);
  }
  const outcomes = new Map(await Promise.all(ids.map(async (id) => [id, await ends.get(id)] as const)));
  // Only confirmed calls were cancelled, and at least one was (a confirmed call may also have ended on
  // its own before the cancel reached it: the page shows the feed's last picture, up to 250 ms old).
  const cancelled = [...outcomes].filter(([, o]) => o === 'cancelled').map(([id]) => id);
  expect(cancelled.length).toBeGreaterThan(0);
  for (const id of cancelled) expect(confirmed).toContain(id);
  for (const id of confirmed) expect(['cancelled', 'done']).toContain(outcomes.get(id));
  expect([...outcomes.values()].filter((o) => o === 'failed')).toEqual([]);
});

test('while the feed is down, rows dim, ages stop counting, Cancel is off and a banner says so', async () => {
  holdCalls(5, 60_000, 0);
  // The page reaches the broker through a proxy that can go away, as the broker would for the page.
  const proxy = await FaultProxy.forUrl(system.url);
  td.add(() => proxy.close());
  const p = await newPage();
  await login(p, proxy.url(system.url).replace(/\/$/, ''));
  await waitFor(async () => (await p.locator('tr[data-call-id]').count()) >= 5, { timeoutMs: 15_000, intervalMs: 100, message: 'rows' });
  expect(await p.locator('[data-stale-banner]').count()).toBe(0);
  proxy.refuse(true);
  proxy.cutAll();
  const page = p;
  try {
    await page.locator('[data-stale-banner]').waitFor({ timeout: 15_000 });
    await page.locator('table[data-stale="true"]').waitFor();
    const buttons = page.locator('tr[data-call-id]').getByRole('button', { name: /^Cancel/ });
    for (const b of await buttons.all()) expect(await b.isDisabled()).toBe(true);
    expect(await page.locator('tr[data-call-id] td.num').filter({ hasText: '≥' }).count()).toBeGreaterThan(0);
    await shot(page, 'inflight-stale');
  } finally {
    proxy.refuse(false);
  }
  await page.locator('[data-stale-banner]').waitFor({ state: 'detached', timeout: 30_000 });
  expect(await page.locator('tr[data-call-id]').first().getByRole('button', { name: /^Cancel/ }).isDisabled()).toBe(false);
  await p.close();
});

test('at 800 px every view tab and In flight\'s Progress and Cancel are on screen, with no sideways scrolling', async () => {
  holdCalls(3, 60_000, 0);
  await page.setViewportSize({ width: 800, height: 900 });
  await login(page);
  await waitFor(async () => (await page.locator('tr[data-call-id]').count()) >= 3, { timeoutMs: 15_000, intervalMs: 100, message: 'rows' });
  const within = async (selector: string): Promise<boolean> => {
    const box = await page.locator(selector).first().boundingBox();
    return box !== null && box.x >= 0 && box.x + box.width <= 800;
  };
  for (const label of ['Services', 'In flight', 'Outcomes', 'Dead letters', 'Console', 'Throughput']) {
    const tab = page.getByRole('navigation', { name: 'Views' }).getByRole('link', { name: new RegExp(`^${label}`) });
    const box = await tab.boundingBox();
    expect(box !== null && box.x >= 0 && box.x + box.width <= 800).toBe(true);
  }
  expect(await within('tr[data-call-id] [role=progressbar], tr[data-call-id] td.wide')).toBe(true);
  expect(await within('tr[data-call-id] button')).toBe(true);
  // A string: this file is compiled without the DOM's types.
  const overflow = await page.evaluate<{ page: number; table: number }>(`({
    page: document.documentElement.scrollWidth - document.documentElement.clientWidth,
    table: Math.max(...[...document.querySelectorAll('.table-wrap')].map((e) => e.scrollWidth - e.clientWidth)),
  })`);
  expect(overflow).toEqual({ page: 0, table: 0 });
  await shot(page, 'inflight-800');
  await page.setViewportSize({ width: 1360, height: 860 });
});

test('the Console view maps a -32602 onto the fields, replaces the previous answer, and Ctrl+Enter keeps to min/max', async () => {
  await login(page);
  const sent: string[] = [];
  const onRequest = (r: { url(): string; method(): string; postData(): string | null }): void => {
    if (r.method() === 'POST' && r.url().endsWith('/rpc')) sent.push(r.postData() ?? '');
  };
  page.on('request', onRequest);
  try {
    await page.keyboard.press('c');
    await page.getByRole('heading', { level: 1, name: 'Console' }).waitFor();
    await page.getByLabel('Method').selectOption('add');
    await page.getByLabel(/^a/).fill('4');
    await page.getByLabel(/^b/).fill('5');
    await page.getByRole('button', { name: /^Send/ }).click();
    await page.locator('[data-answer]').getByText('9').waitFor();
    // Params the schema refuses: the problems on the fields, the oneOf noise left out, the old answer gone.
    await page.getByLabel('Edit params as JSON').check();
    await page.getByLabel('Params (JSON)').fill('{"a": "four", "b": 5}');
    await page.keyboard.press('Control+Enter');
    const problems = page.locator('[data-params-problems]');
    await problems.getByText('a must be number').waitFor();
    expect(await problems.textContent()).not.toMatch(/oneOf|must be array/);
    expect(await page.locator('[data-answer]').count()).toBe(0);
    await shot(page, 'console-invalid-params');
    // dlq.list's limit is 1..1000: Ctrl+Enter with 5000 is stopped by the form, as the Send button is.
    await page.getByLabel('Method').selectOption('dlq.list');
    await page.getByLabel(/^limit/).fill('5000');
    await page.getByLabel(/^limit/).press('Control+Enter');
    await page.getByLabel(/^limit/).fill('5');
    await page.getByLabel(/^limit/).press('Control+Enter');
    await page.locator('[data-answer]').getByText('"total"').waitFor();
    const lists = sent.filter((b) => b.includes('"dlq.list"'));
    expect(lists.map((b) => (JSON.parse(b) as { params?: { limit?: number } }).params?.limit)).toEqual([5]);
  } finally {
    page.off('request', onRequest);
  }
});

test('method rows on Services show a disclosure marker that turns when opened', async () => {
  await login(page);
  await page.keyboard.press('s');
  const summary = page.locator('[data-method="add"] summary').first();
  await summary.waitFor();
  // Runs in the page (whose globalThis has getComputedStyle; this file has no DOM types).
  const marker = (): Promise<string> => summary.evaluate((el) => (globalThis as unknown as { getComputedStyle(e: unknown, pseudo: string): { content: string } }).getComputedStyle(el, '::before').content);
  expect(await marker()).toBe('"▸"');
  await summary.click();
  expect(await marker()).toBe('"▾"');
});
