// `warren inflight --watch` refreshes for as long as it runs: each refresh must leave nothing behind on
// its stop signal (a listener per refresh made Node warn of a leak on the user's terminal from the 11th on).
import { getEventListeners } from 'node:events';
import { PassThrough } from 'node:stream';
import { redisUrl, uniqueName } from '@warren/testkit';
import { run, type Io } from '../src/index';

it('refreshes 15 times on one stop signal and leaves no listener on it, and a stop ends the watch', async () => {
  let out = '';
  const io: Io = {
    stdout: { write: (t: string) => (out += t), isTTY: false },
    stderr: { write: () => true, isTTY: false },
    stdin: new PassThrough(),
    env: { REDIS_URL: redisUrl(), WARREN_KEY_PREFIX: uniqueName('cli-watch') },
  };
  const stop = new AbortController();
  await expect(run(['--json', 'inflight', '--watch', '--interval', '1', '--count', '15'], io, stop.signal)).resolves.toBe(0);
  expect(out.trim().split('\n')).toHaveLength(15);
  // Before, 14 were left (Node warned of a leak from the 11th).
  expect(getEventListeners(stop.signal, 'abort')).toHaveLength(0);

  out = '';
  const watching = run(['--json', 'inflight', '--watch', '--interval', '60000'], io, stop.signal);
  await new Promise((r) => setTimeout(r, 300));
  stop.abort();
  await expect(watching).resolves.toBe(0);
  expect(out.trim().split('\n')).toHaveLength(1);
});
