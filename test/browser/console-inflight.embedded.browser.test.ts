/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// In flight as a tool (issue 27), in headless Chromium against the embedded system: sort by any
// column (aria-sort, kept in the link), counts by method / worker / state, pause, bulk cancel by
// selection and by method (confirmed: the confirmed calls, and only those, get -32003), and rows
// windowed at 1,000 calls. Each test holds its own calls (a tag) and lets them go at its end.
// Screenshots go to test-artifacts/console/inflight/ (the docs' ones are copied to docs/images/).
import { setMaxListeners } from 'node:events';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { connectClient, startService, type RpcClient } from '@warren/amqp';
import { createMemoryTracker } from '@warren/inflight';
import { ErrorCode } from '@warren/jsonrpc';
import { silentLogger } from '@warren/logger';
import { Teardown, waitFor } from '@warren/testkit';
import { startEmbedded, type EmbeddedSystem } from '../../scripts/embedded';
import { artifactsDir } from './chromium';
import { prepareConsole, openBrowser, signIn } from './console-page';

jest.setTimeout(180_000);
const td = new Teardown();
const shots = path.join(artifactsDir, 'inflight');
const operatorToken = 'inflight-operator-token';
let system: EmbeddedSystem;
let client: RpcClient;
let page: Page;
/** Held calls run until their tag is let go (or they are cancelled). */
const tags = new Map<string, AbortController>();
const ends: Promise<unknown>[] = [];

type End = 'done' | 'cancelled' | 'failed';

function tagSignal(tag: string): AbortSignal {
  let c = tags.get(tag);
  if (!c) {
    tags.set(tag, (c = new AbortController()));
    // Every held call of a tag listens to it, hundreds at once in the long-list tests: not a leak.
    setMaxListeners(0, c.signal);
  }
  return c.signal;
}

beforeAll(async () => {
  prepareConsole(shots);
  system = await startEmbedded({ GATEWAY_OPERATOR_TOKENS: operatorToken, GATEWAY_PORT: '0' }, () => silentLogger(), {
    instances: [{ name: 'calculator-1', service: 'calculator' }], broker: { defaultMetrics: false, console: { pollMs: 250 } },
  });
  td.add(() => system.close());
  const held = (p: unknown, ctx: { signal: AbortSignal }): Promise<string> => new Promise<string>((resolve) => {
    const tag = tagSignal((p as { tag: string }).tag);
    if (tag.aborted) resolve('released');
    tag.addEventListener('abort', () => resolve('released'), { once: true });
    ctx.signal.addEventListener('abort', () => resolve('aborted'), { once: true });
  });
  const holder = await startService({
    connection: system.bus.connect(), name: 'holder', instanceId: 'holder-1', prefetch: 1200, tracker: createMemoryTracker(system.inflight, { heartbeatMs: 500 }),
    methods: { hold: { handler: held }, wait: { handler: held } },
  });
  td.add(() => holder.close());
  client = await connectClient({ connection: system.bus.connect(), defaultTimeoutMs: 120_000 });
  td.add(() => client.close());
  page = await (await openBrowser(td)).newPage();
  await waitFor(() => ['hold', 'wait'].every((m) => system.broker.gateway.catalogue.current().methods.has(m)), { message: 'hold and wait announced' });
  await login(page);
});
afterAll(async () => {
  for (const c of tags.values()) c.abort();
  await Promise.allSettled(ends);
  await td.run();
});

/** Starts `count` calls of `method` held under `tag`; their ids, and how each ended. */
function start(method: 'hold' | 'wait', tag: string, count: number): { ids: string[]; ended: Map<string, Promise<End>> } {
  tagSignal(tag);
  const ended = new Map<string, Promise<End>>();
  const ids = Array.from({ length: count }, () => {
    const callId = client.nextCallId();
    const end = client.call(method, { tag }, { id: callId }).then(() => 'done' as const, (err: { code?: number }) => (err.code === ErrorCode.Cancelled ? 'cancelled' as const : 'failed' as const));
    ended.set(callId, end);
    ends.push(end);
    return callId;
  });
  return { ids, ended };
}

/** Lets a tag's calls go and waits for In flight to show none. */
async function release(tag: string): Promise<void> {
  tags.get(tag)?.abort();
  await waitFor(async () => (await page.locator('tr[data-call-id]').count()) === 0, { timeoutMs: 30_000, intervalMs: 100, message: 'rows gone' });
}

async function login(p: Page): Promise<void> {
  await p.goto(`${system.url}/#/inflight`);
  await signIn(p, operatorToken);
  await p.getByRole('navigation', { name: 'Views' }).waitFor();
}

/** Loads the page afresh at `hash` (the tab keeps its token), as a pasted link would. */
async function open(hash: string): Promise<void> {
  await page.goto('about:blank');
  await page.goto(`${system.url}/${hash}`);
  await page.getByRole('heading', { level: 1, name: 'In flight' }).waitFor();
}

const listed = async (): Promise<number> => Number(await page.locator('table[data-rows]').getAttribute('data-rows'));
async function rowsAtLeast(n: number): Promise<void> {
  await waitFor(async () => (await page.locator('table[data-rows]').count()) > 0 && (await listed()) >= n, { timeoutMs: 60_000, intervalMs: 100, message: `${n} rows` });
}

async function shot(name: string): Promise<void> {
  await page.screenshot({ path: path.join(shots, `${name}.png`), fullPage: false });
}

test('sort by any column: the header says so (aria-sort), the rows follow, the link keeps it; ids link to the call', async () => {
  start('hold', 'sort', 4);
  start('wait', 'sort', 2);
  await open('#/inflight');
  await rowsAtLeast(6);
  const methods = (): Promise<string[]> => page.locator('tr[data-call-id] td.strong').evaluateAll((tds) => tds.map((td) => td.firstChild?.textContent ?? ''));
  const head = (name: string) => page.locator('thead th').filter({ has: page.locator(`button[data-sort="${name}"]`) });
  expect(await head('age').getAttribute('aria-sort')).toBe('descending');
  await page.locator('button[data-sort="method"]').click();
  expect(await head('method').getAttribute('aria-sort')).toBe('ascending');
  expect(await head('age').getAttribute('aria-sort')).toBe('none');
  expect(await methods()).toEqual(['hold', 'hold', 'hold', 'hold', 'wait', 'wait']);
  expect(await page.evaluate(() => location.hash)).toContain('sort=method');
  await page.locator('button[data-sort="method"]').click();
  expect(await head('method').getAttribute('aria-sort')).toBe('descending');
  expect(await methods()).toEqual(['wait', 'wait', 'hold', 'hold', 'hold', 'hold']);
  await shot('inflight-sorted');
  // The link, pasted: the same sort, and its method filter.
  await open('#/inflight?method=wait&sort=-id');
  await rowsAtLeast(2);
  expect(await listed()).toBe(2);
  expect(await head('id').getAttribute('aria-sort')).toBe('descending');
  const ids = await page.locator('tr[data-call-id]').evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-call-id') ?? ''));
  expect(ids).toEqual([...ids].sort().reverse());
  const link = page.locator('tr[data-call-id] a[data-call-link]').first();
  expect(await link.getAttribute('href')).toBe(`#/calls/${encodeURIComponent(ids[0] ?? '')}`);
  await open('#/inflight');
  await release('sort');
});

test('counts grouped by method, worker and state; a method\'s count narrows the table to it', async () => {
  start('hold', 'groups', 5);
  start('wait', 'groups', 3);
  await open('#/inflight');
  await rowsAtLeast(8);
  const counts = (): Promise<Record<string, number>> => page.locator('[data-groups] li[data-group]').evaluateAll((lis) => Object.fromEntries(lis.map((li) => [li.getAttribute('data-group'), Number(li.getAttribute('data-count'))])));
  expect(await counts()).toEqual({ hold: 5, wait: 3 });
  await shot('inflight-groups');
  await page.getByLabel('Count by').selectOption('worker');
  await page.locator('[data-groups="worker"]').waitFor();
  expect(await counts()).toEqual({ 'holder-1': 8 });
  await page.getByLabel('Count by').selectOption('state');
  expect(await counts()).toEqual({ running: 8 });
  expect(await page.evaluate(() => location.hash)).toContain('group=state');
  await page.getByLabel('Count by').selectOption('method');
  await page.locator('[data-group="wait"]').getByRole('button', { name: /^wait/ }).click();
  await waitFor(async () => (await listed()) === 3, { message: 'only wait listed' });
  expect(await page.evaluate(() => location.hash)).toContain('method=wait');
  await page.locator('[data-group="wait"]').getByRole('button', { name: /^wait/ }).click();
  await waitFor(async () => (await listed()) === 8, { message: 'all listed again' });
  await release('groups');
});

test('pause: the list stays as it stood while calls come and go; Cancel still reaches only the call confirmed', async () => {
  const first = start('hold', 'pause', 3);
  await open('#/inflight');
  await rowsAtLeast(3);
  await page.locator('button[data-pause]').click();
  await page.locator('[data-paused]').waitFor();
  const frozen = await page.locator('tr[data-call-id]').evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-call-id')));
  const more = start('hold', 'pause', 2);
  // The feed goes on (the tab's count says 5), the paused list does not.
  await page.locator('nav .count', { hasText: '5' }).waitFor({ timeout: 30_000 });
  expect(await listed()).toBe(3);
  expect(await page.locator('tr[data-call-id]').evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-call-id')))).toEqual(frozen);
  await shot('inflight-paused');
  await page.locator('tr[data-call-id]').nth(1).getByRole('button', { name: /^Cancel/ }).click();
  const id = await page.getByRole('alertdialog').locator('[data-confirm-id]').textContent();
  expect(id).toBe(frozen[1]);
  await page.getByRole('alertdialog').getByRole('button', { name: `Cancel call ${id}` }).click();
  expect(await first.ended.get(id ?? '')).toBe('cancelled');
  await page.locator('button[data-pause]').click();
  await page.locator('[data-paused]').waitFor({ state: 'detached' });
  await waitFor(async () => (await listed()) === 4, { message: 'the list updated again' });
  tags.get('pause')?.abort();
  const outcomes = await Promise.all([...first.ended, ...more.ended].map(async ([callId, end]) => [callId, await end] as const));
  expect(outcomes.filter(([, o]) => o === 'cancelled').map(([callId]) => callId)).toEqual([id]);
  await release('pause');
});

test('bulk cancel by selection: the dialog says how many and which; those, and only those, get -32003', async () => {
  const { ids, ended } = start('hold', 'select', 8);
  await open('#/inflight');
  await rowsAtLeast(8);
  const rows = page.locator('tr[data-call-id]');
  const picked: string[] = [];
  for (const i of [1, 4, 6]) {
    const row = rows.nth(i);
    picked.push((await row.getAttribute('data-call-id')) ?? '');
    await row.getByRole('checkbox').check();
  }
  await page.locator('.bulk-bar[data-selected="3"]').waitFor();
  await page.getByRole('button', { name: 'Cancel selected' }).click();
  const dialog = page.getByRole('alertdialog');
  await dialog.getByRole('heading', { name: 'Cancel 3 calls?' }).waitFor();
  expect((await dialog.locator('[data-confirm-id]').allTextContents()).sort()).toEqual([...picked].sort());
  await shot('inflight-bulk-confirm');
  await dialog.getByRole('button', { name: 'Cancel 3 calls' }).click();
  for (const id of picked) expect(await ended.get(id)).toBe('cancelled');
  await page.locator('[data-last-cancel="3 calls"]').waitFor();
  tags.get('select')?.abort();
  const outcomes = await Promise.all(ids.map(async (id) => [id, await ended.get(id)] as const));
  expect(outcomes.filter(([, o]) => o === 'cancelled').map(([id]) => id).sort()).toEqual([...picked].sort());
  expect(outcomes.filter(([, o]) => o === 'done')).toHaveLength(5);
  await release('select');
});

test('bulk cancel by method: every call of that method listed, confirmed with its count; the other method\'s calls run on', async () => {
  const waits = start('wait', 'method', 4);
  const holds = start('hold', 'method', 3);
  await open('#/inflight');
  await rowsAtLeast(7);
  await page.getByRole('button', { name: 'Cancel all 4 wait calls' }).click();
  const dialog = page.getByRole('alertdialog');
  await dialog.getByRole('heading', { name: 'Cancel 4 calls?' }).waitFor();
  expect((await dialog.locator('[data-confirm-id]').allTextContents()).sort()).toEqual([...waits.ids].sort());
  expect(await dialog.textContent()).toContain('4 × wait');
  await shot('inflight-bulk-method');
  await dialog.getByRole('button', { name: 'Cancel 4 calls' }).click();
  for (const id of waits.ids) expect(await waits.ended.get(id)).toBe('cancelled');
  tags.get('method')?.abort();
  for (const id of holds.ids) expect(await holds.ended.get(id)).toBe('done');
  await release('method');
});

test('at 1,000 calls rows are windowed: the DOM holds a bounded number, scrolling shows the last ones, the header stays in view', async () => {
  start('hold', 'many', 1000);
  await open('#/inflight');
  await rowsAtLeast(1000);
  const inDom = (): Promise<number> => page.locator('tr[data-call-id]').count();
  expect(await inDom()).toBeLessThanOrEqual(80);
  await page.evaluate(() => window.scrollTo(0, document.documentElement.scrollHeight));
  await page.locator('tr[data-call-id][aria-rowindex="1001"]').waitFor({ timeout: 10_000 });
  expect(await inDom()).toBeLessThanOrEqual(80);
  // The sticky header: its top is just under the page's bar, not scrolled away.
  const bar = await page.locator('header.top').boundingBox();
  const th = await page.locator('thead th').nth(1).boundingBox();
  expect(bar !== null && th !== null && Math.abs(th.y - (bar.y + bar.height)) <= 2).toBe(true);
  await shot('inflight-1000-scrolled');
  await page.evaluate(() => window.scrollTo(0, 0));
  await release('many');
});
