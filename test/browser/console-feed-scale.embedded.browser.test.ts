/// <reference lib="dom" />
// The live feed at thousands of calls in flight (issue 45, "a feed that scales"), in headless
// Chromium against the embedded system: 3,000 held calls, each reporting progress every second,
// are about 1.5 MB of list, six times the feed's per-browser buffer. The page lists every one of
// them, their progress keeps moving, and the stream is never cut (the page opens it once: a cut
// stream would make it reconnect). Screenshot: test-artifacts/console/feed-scale/.
import { setMaxListeners } from 'node:events';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { connectClient, startService, type RpcClient } from '@warren/amqp';
import { createMemoryTracker } from '@warren/inflight';
import { silentLogger } from '@warren/logger';
import { Teardown, waitFor } from '@warren/testkit';
import { startEmbedded, type EmbeddedSystem } from '../../scripts/embedded';
import { artifactsDir } from './chromium';
import { prepareConsole, openBrowser, signIn } from './console-page';

jest.setTimeout(180_000);
const calls = 3000;
const td = new Teardown();
const shots = path.join(artifactsDir, 'feed-scale');
const operatorToken = 'feed-scale-operator-token';
const release = new AbortController();
let system: EmbeddedSystem;
let client: RpcClient;
let page: Page;
let started = 0;

beforeAll(async () => {
  // One listener per held call on the one release signal: intended.
  setMaxListeners(0, release.signal);
  prepareConsole(shots);
  system = await startEmbedded({ GATEWAY_OPERATOR_TOKENS: operatorToken, GATEWAY_PORT: '0' }, () => silentLogger(), {
    instances: [], broker: { defaultMetrics: false, console: { pollMs: 500 } },
  });
  td.add(() => system.close());
  // Three workers of 1,000 each: a worker's heartbeat lists at most 1,000 of its calls (maxListedCalls in @warren/inflight).
  for (const instanceId of ['bulk-1', 'bulk-2', 'bulk-3']) {
    const holder = await startService({
      connection: system.bus.connect(), name: 'bulk', instanceId, prefetch: calls / 3, tracker: createMemoryTracker(system.inflight, { heartbeatMs: 1000 }),
      methods: { hold: { handler: hold } },
    });
    td.add(() => holder.close());
  }
  client = await connectClient({ connection: system.bus.connect(), defaultTimeoutMs: 170_000 });
  td.add(() => client.close());
  page = await (await openBrowser(td)).newPage();
  await waitFor(() => system.broker.gateway.catalogue.current().methods.has('hold'), { message: 'hold announced' });
});
/** Runs until released, reporting a growing fraction every second. */
function hold(_params: unknown, ctx: { readonly signal: AbortSignal; progress(fraction: number, message?: string): void }): Promise<string> {
  started += 1;
  return new Promise<string>((resolve) => {
    let step = 0;
    const tick = setInterval(() => ctx.progress(Math.min(0.99, ++step / 100), `step ${step}`), 1000);
    const done = (why: string): void => {
      clearInterval(tick);
      resolve(why);
    };
    if (release.signal.aborted) done('released');
    release.signal.addEventListener('abort', () => done('released'), { once: true });
    ctx.signal.addEventListener('abort', () => done('aborted'), { once: true });
  });
}

afterAll(async () => {
  release.abort();
  await td.run();
});

test(`${calls} calls in flight with progress every second: the page lists them all and the stream is never cut`, async () => {
  const answers = Array.from({ length: calls }, () => client.call('hold', {}).catch(() => undefined));
  await waitFor(() => started >= calls, { timeoutMs: 120_000, intervalMs: 100, message: `${calls} calls held` });
  let streams = 0;
  page.on('request', (r) => {
    if (r.url().endsWith('/console/events')) streams += 1;
  });
  await page.goto(`${system.url}/#/inflight`);
  await signIn(page, operatorToken);
  await page.getByRole('heading', { level: 1, name: 'In flight' }).waitFor();
  const listed = async (): Promise<number> => Number((await page.locator('table[data-rows]').getAttribute('data-rows')) ?? 0);
  await waitFor(async () => (await page.locator('table[data-rows]').count()) > 0 && (await listed()) === calls, { timeoutMs: 60_000, intervalMs: 100, message: `${calls} rows listed` }).catch(async (err: unknown) => {
    throw new Error(`${String(err)}; listed ${await listed()}, streams ${streams}, header ${await page.locator('header').textContent()}`);
  });
  // Progress keeps moving for the calls on screen: the feed is live, not a snapshot that froze.
  const progress = (): Promise<number[]> => page.locator('tr[data-call-id] [role=progressbar]').evaluateAll((bars) => bars.map((b) => Number(b.getAttribute('aria-valuenow'))));
  await waitFor(async () => (await progress()).length > 0, { timeoutMs: 30_000, intervalMs: 100, message: 'progress shown' });
  const first = Math.max(...(await progress()));
  await waitFor(async () => Math.max(...(await progress())) > first, { timeoutMs: 30_000, intervalMs: 200, message: 'progress advancing' });
  expect(await listed()).toBe(calls);
  await page.screenshot({ path: path.join(shots, 'inflight-3000.png'), fullPage: false });
  expect(streams).toBe(1);
  release.abort();
  await Promise.all(answers);
});
