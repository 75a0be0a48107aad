/**
 * The console's In flight view under load, in headless Chromium:  npx tsx bench/console-bench.ts [--calls N] [--seconds S] [--churn C]
 *
 * An embedded system (in memory) with N calls held in flight, the console open on In flight with
 * the feed at 250 ms. `--churn C`: about C calls a second end and are replaced by new ones (each
 * lives a random time averaging N / C seconds), so the feed has changes to carry; 0 (the default)
 * holds the same N calls throughout. Reports, over S seconds: feed-to-DOM time of each update (the page's
 * `inflight-feed-to-dom` User Timing measures: from reading the event to the DOM updated) as p50 /
 * p90 / max, and the main thread's busy share (Chrome's Performance.getMetrics TaskDuration over
 * wall time). Targets (issue 27): p90 ≤ 50 ms and busy ≤ 25 % at 1,000 calls.
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { connectClient, startService } from '@warren/amqp';
import { createMemoryTracker } from '@warren/inflight';
import { silentLogger } from '@warren/logger';
import { waitFor } from '@warren/testkit';
import { startEmbedded } from '../scripts/embedded';
import { launchChromium } from '../test/browser/chromium';

function option(name: string, fallback: number, min = 1): number {
  const i = process.argv.indexOf(name);
  const value = i >= 0 ? Number(process.argv[i + 1]) : fallback;
  if (!Number.isSafeInteger(value) || value < min) throw new Error(`${name} must be an integer ≥ ${min}`);
  return value;
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

async function main(): Promise<void> {
  const calls = option('--calls', 1000);
  const seconds = option('--seconds', 15);
  const churn = option('--churn', 0, 0);
  const root = path.resolve(__dirname, '..');
  execFileSync(process.execPath, [path.join(root, 'broker', 'console', 'build.mjs')], { cwd: root, stdio: 'pipe' });
  const token = 'bench-operator';
  const system = await startEmbedded({ GATEWAY_OPERATOR_TOKENS: token, GATEWAY_PORT: '0', GATEWAY_MAX_CONCURRENT_CALLS: String(calls + 100) }, () => silentLogger(), {
    instances: [{ name: 'calculator-1', service: 'calculator' }], broker: { defaultMetrics: false, console: { pollMs: 250 } },
  });
  const release = new AbortController();
  const holder = await startService({
    connection: system.bus.connect(), name: 'holder', instanceId: 'holder-1', prefetch: calls + 10, tracker: createMemoryTracker(system.inflight, { heartbeatMs: 500 }),
    methods: { hold: { handler: (p, ctx) => new Promise<string>((resolve) => {
      const ms = (p as { ms?: number }).ms;
      const timer = ms === undefined ? undefined : setTimeout(() => done(), ms);
      const done = (): void => {
        clearTimeout(timer);
        resolve('released');
      };
      release.signal.addEventListener('abort', done, { once: true });
      ctx.signal.addEventListener('abort', done, { once: true });
    }) } },
  });
  const client = await connectClient({ connection: system.bus.connect(), defaultTimeoutMs: 600_000 });
  const chrome = await launchChromium();
  try {
    await waitFor(() => system.broker.gateway.catalogue.current().methods.has('hold'), { message: 'hold announced' });
    // With churn, each call lives a random time averaging calls / churn seconds, and is replaced when it ends.
    const lifeMs = churn > 0 ? (calls / churn) * 1000 : undefined;
    const hold = async (): Promise<void> => {
      await client.call('hold', lifeMs === undefined ? {} : { ms: Math.round(Math.random() * 2 * lifeMs) }).catch(() => undefined);
      if (lifeMs !== undefined && !release.signal.aborted) await hold();
    };
    const answers = Array.from({ length: calls }, () => hold());
    const page = await chrome.context.newPage();
    await page.goto(`${system.url}/#inflight`);
    await page.getByLabel('Token').fill(token);
    await page.getByRole('button', { name: 'Open the console' }).click();
    const listed = async (): Promise<number> => Number(await page.locator('table[data-rows]').getAttribute('data-rows', { timeout: 60_000 }));
    // With churn some calls are always between their end and their replacement's start.
    const expected = churn > 0 ? Math.floor(calls * 0.95) : calls;
    await waitFor(async () => (await listed()) >= expected, { timeoutMs: 60_000, intervalMs: 500, message: `${expected} rows` });
    const cdp = await chrome.context.newCDPSession(page);
    await cdp.send('Performance.enable');
    const taskDuration = async (): Promise<number> => (await cdp.send('Performance.getMetrics')).metrics.find((m) => m.name === 'TaskDuration')?.value ?? 0;
    await page.evaluate(() => performance.clearMeasures('inflight-feed-to-dom'));
    const busy0 = await taskDuration();
    const wall0 = Date.now();
    await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
    const busy = (await taskDuration()) - busy0;
    const wall = (Date.now() - wall0) / 1000;
    const times = (await page.evaluate(() => performance.getEntriesByName('inflight-feed-to-dom').map((e) => e.duration))).sort((a, b) => a - b);
    const rows = await listed();
    process.stdout.write(`console-bench: ${rows} rows, churn ${churn}/s, ${times.length} updates in ${wall.toFixed(1)} s; feed-to-DOM p50 ${percentile(times, 50).toFixed(1)} ms, p90 ${percentile(times, 90).toFixed(1)} ms, max ${(times.at(-1) ?? NaN).toFixed(1)} ms; main thread busy ${((busy / wall) * 100).toFixed(1)} %\n`);
    release.abort();
    await Promise.all(answers);
  } finally {
    await chrome.close();
    await client.close();
    await holder.close();
    await system.close();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
  process.exit(1);
});
