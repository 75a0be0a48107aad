// `OTEL_TRACES_EXPORTER=console npm start`, then one HTTP call carrying a `traceparent`: the broker
// and the calculator processes each print spans of that trace (the SDK's console exporter, started
// from the standard OTEL_* variables by @warren/tracing-node in every main). Issue #31's acceptance.
// And each service answers /metrics on an ops port of its own (scripts/start-ops.ts), counting that call.
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { Teardown, amqpUrl, freePort, redisUrl, spawnTs, waitFor } from '@warren/testkit';
import { TestNamespace } from '../support/amqp';
import { deleteRedisKeys, repoRoot } from './helpers';

const td = new Teardown();
const ns = new TestNamespace();
beforeAll(() => {
  td.add(() => ns.destroy());
  td.add(() => deleteRedisKeys(ns.namespace));
  for (const s of ['calculator', 'audit', 'jobs', 'warren-broker']) ns.service(s);
});
afterAll(() => td.run());

it('prints the spans of a traceparent-carrying HTTP call from the broker and the calculator', async () => {
  const port = await freePort();
  // The services' ops ports, numbered up from this base: below the ephemeral range freePort draws from.
  const opsBase = 20_000 + (process.pid % 1000) * 8;
  const child = spawnTs(path.join(repoRoot, 'scripts', 'start.ts'), [], {
    AMQP_URL: amqpUrl(),
    REDIS_URL: redisUrl(),
    WARREN_NAMESPACE: ns.namespace,
    GATEWAY_PORT: String(port),
    GATEWAY_AUTH: 'none',
    LOG_LEVEL: 'warn',
    LOG_FORMAT: 'json',
    OTEL_TRACES_EXPORTER: 'console',
    WARREN_OPS_PORT: String(opsBase),
  });
  td.add(() => child.kill('SIGKILL'));
  const traceId = randomBytes(16).toString('hex');
  const traceparent = `00-${traceId}-${randomBytes(8).toString('hex')}-01`;
  const call = async (): Promise<unknown> => {
    const res = await fetch(`http://127.0.0.1:${port}/rpc`, { method: 'POST', headers: { 'content-type': 'application/json', traceparent }, body: '{"jsonrpc":"2.0","method":"average","params":[1,2,6],"id":1}' });
    return ((await res.json()) as { result?: unknown }).result;
  };
  // Answered once the broker and a calculator are up (the same trace each time: any of the calls will do).
  await waitFor(async () => (await call().catch(() => undefined)) === 3, { timeoutMs: 90_000, intervalMs: 200, message: 'average answered' });
  // The console exporter prints each span as an object, one field a line: `traceId: '<id>',`, prefixed by the process.
  const printedBy = (process: RegExp): boolean => child.stdout.some((line) => process.test(line) && line.includes(`traceId: '${traceId}'`));
  await waitFor(() => printedBy(/^broker\s+\|/) && printedBy(/^calculator-\d\s+\|/), { timeoutMs: 30_000, intervalMs: 100, message: 'spans of the trace printed by the broker and a calculator' });
  // calculator-1 and calculator-2 have the first two ops ports: between them they ran `average` and its nested `sum`.
  const scrape = async (offset: number): Promise<string> => (await fetch(`http://127.0.0.1:${opsBase + offset}/metrics`)).text();
  const scraped = (await scrape(0)) + (await scrape(1));
  const answered = (method: string): boolean =>
    scraped.split('\n').some((l) => l.startsWith('warren_worker_requests_total{') && l.includes(`method="${method}"`) && l.includes('outcome="ok"') && !/ 0$/.test(l));
  expect([answered('average'), answered('sum')]).toEqual([true, true]);
  expect((await child.kill('SIGTERM')).code).toBe(0);
}, 180_000);
