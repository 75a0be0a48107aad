// Any number of stacks per machine (issue 42): two `npm start` side by side, each with only its own
// WARREN_NAMESPACE and GATEWAY_PORT, are both ready and both answer `add`. Their ops ports are picked
// free (scripts/start-ops.ts), so the second takes the ones after the first's instead of dying on
// EADDRINUSE; each banner lists its own, and no two services share one.
import { Teardown } from '@warren/testkit';
import { add, startStack, type Stack } from './stack';

const td = new Teardown();
afterAll(() => td.run());

/** The ops ports a stack's banner lists: `name host:port` pairs. */
function bannerPorts(stack: Stack): number[] {
  const banner = stack.lines.find((l) => l.startsWith('warren: ops ports (')) ?? '';
  return [...banner.matchAll(/ [\d.]+:(\d+)/g)].map((m) => Number(m[1]));
}

it('two stacks, each with its namespace and gateway port only: both ready, both answer add, with ops ports of their own', async () => {
  const first = await startStack(td);
  const second = await startStack(td);
  expect(await add(first.port)).toBe(9);
  expect(await add(second.port)).toBe(9);
  const ports = [...bannerPorts(first), ...bannerPorts(second)];
  expect(ports).toHaveLength(10);
  expect(new Set(ports).size).toBe(10);
  // Each service listens where its banner says: its /readyz answers on that port.
  for (const port of ports) expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(200);
  expect(second.lines.join('\n')).not.toMatch(/EADDRINUSE|stopping everything/);
}, 150_000);
