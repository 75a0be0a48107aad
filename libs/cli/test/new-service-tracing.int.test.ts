// A service scaffolded by `warren new service` starts tracing like the example services: its main,
// run with OTEL_TRACES_EXPORTER=console against the real RabbitMQ, prints the server span of a call
// made with a known traceparent (the SDK's console exporter, started by @warren/tracing-node).
// The files are serviceFiles' (what the command writes), in a package under services/ removed after.
import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { connectClient } from '@warren/amqp';
import { Teardown, amqpUrl, spawnTs, uniqueName, waitFor } from '@warren/testkit';
import { TestNamespace } from '../../../test/support/amqp';
import { serviceFiles } from '../src/scaffold/service-files';

const repoRoot = path.resolve(__dirname, '..', '..', '..');
const td = new Teardown();
const ns = new TestNamespace();
afterAll(() => td.run());

it('prints a span of a call, in the caller\'s trace, when OTEL_TRACES_EXPORTER=console', async () => {
  td.add(() => ns.destroy());
  const name = ns.service(`traced-${uniqueName('t').toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/-+$/, '').slice(-16)}`);
  const dir = path.join(repoRoot, 'services', name);
  td.add(() => rmSync(dir, { recursive: true, force: true }));
  for (const [file, text] of serviceFiles(name)) {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    writeFileSync(path.join(dir, file), text);
  }
  const child = spawnTs(path.join(dir, 'src', 'main.ts'), [], { AMQP_URL: amqpUrl(), WARREN_NAMESPACE: ns.namespace, OTEL_TRACES_EXPORTER: 'console', LOG_LEVEL: 'warn', REDIS_URL: '' });
  td.add(async () => {
    await child.kill('SIGKILL');
  });
  const client = await connectClient({ urls: amqpUrl(), namespace: ns.namespace, defaultTimeoutMs: 5000 });
  td.add(() => client.close());
  const traceId = randomBytes(16).toString('hex');
  const traceparent = `00-${traceId}-${randomBytes(8).toString('hex')}-01`;
  // Answered once the service is up (its queue bound); until then the call has no route.
  await waitFor(async () => (await client.call(`${name}.greet`, { name: 'Ada' }, { traceparent }).catch(() => undefined)) === 'Hello, Ada!', { timeoutMs: 60_000, intervalMs: 200, message: 'the scaffolded service answered' });
  // The console exporter prints each span as an object, one field a line.
  await waitFor(() => child.stdout.some((line) => line.includes(`traceId: '${traceId}'`)), { timeoutMs: 15_000, message: `a span of trace ${traceId} printed` });
  const printed = child.stdout.join('\n');
  expect(printed).toContain(`name: '${name}.greet'`);
  expect((await child.kill('SIGTERM')).code).toBe(0);
}, 120_000);
