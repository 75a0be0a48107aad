// The README's greeter (examples/greeter.ts) serves in the namespace WARREN_NAMESPACE names, as the
// CLI and every service read it: started with a namespace of its own, a client of that namespace
// gets its answer.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { connectClient } from '@warren/amqp';
import { Teardown, amqpUrl, waitFor } from '@warren/testkit';
import { TestNamespace } from '../support/amqp';
import { repoRoot } from './helpers';

const td = new Teardown();
afterAll(() => td.run());

it('serves greet in WARREN_NAMESPACE', async () => {
  const ns = new TestNamespace();
  ns.service('greeter');
  td.add(() => ns.destroy());
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(repoRoot, 'examples/greeter.ts')], { cwd: repoRoot, stdio: 'ignore', env: { ...process.env, AMQP_URL: amqpUrl(), WARREN_NAMESPACE: ns.namespace } });
  td.add(async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, 'exit');
    child.kill('SIGKILL');
    await exited;
  });
  const client = await connectClient({ urls: amqpUrl(), namespace: ns.namespace, defaultTimeoutMs: 5000 });
  td.add(() => client.close());
  // Until the greeter has declared its queue, the namespace has no route for greet.
  await waitFor(async () => (await client.call('greet', { name: 'Ada' }).catch(() => undefined)) === 'Hello, Ada!', { timeoutMs: 60_000, intervalMs: 200, message: 'greet answers in the namespace' });
}, 90_000);
