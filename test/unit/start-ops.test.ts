// `npm start` gives every service process an ops port of its own (scripts/start-ops.ts).
import { createServer, type AddressInfo } from 'node:net';
import { defaultOpsBase, freeOpsPorts, opsPorts, portFree } from '../../scripts/start-ops';

const names = ['calculator-1', 'calculator-2', 'audit'];

it('numbers the services up from 9464 by default, or from WARREN_OPS_PORT', () => {
  expect(opsPorts({}, names)).toEqual({ 'calculator-1': String(defaultOpsBase), 'calculator-2': String(defaultOpsBase + 1), audit: String(defaultOpsBase + 2) });
  expect(opsPorts({ WARREN_OPS_PORT: '' }, names)['audit']).toBe('9466');
  expect(opsPorts({ WARREN_OPS_PORT: '20100' }, names)).toEqual({ 'calculator-1': '20100', 'calculator-2': '20101', audit: '20102' });
});

it('turns them off with WARREN_OPS_PORT=off (each child sees the variable empty: unset)', () => {
  expect(opsPorts({ WARREN_OPS_PORT: 'off' }, names)).toEqual({ 'calculator-1': '', 'calculator-2': '', audit: '' });
});

it.each(['0', '-1', '9464x', '1e4', '65534', 'on'])('refuses WARREN_OPS_PORT=%s, naming the variable', (value) => {
  expect(() => opsPorts({ WARREN_OPS_PORT: value }, names)).toThrow(/WARREN_OPS_PORT/);
});

// Any number of stacks per machine (issue 42): a port held by another stack is skipped, never fatal.
it('moves each service up to the next port free at the host and not given to an earlier one', async () => {
  const held = new Set([9464, 9466, 9467]);
  const free = (port: number): Promise<boolean> => Promise.resolve(!held.has(port));
  expect(await freeOpsPorts({}, names, '127.0.0.1', free)).toEqual({ 'calculator-1': '9465', 'calculator-2': '9468', audit: '9469' });
  expect(await freeOpsPorts({ WARREN_OPS_PORT: 'off' }, names, '127.0.0.1', free)).toEqual({ 'calculator-1': '', 'calculator-2': '', audit: '' });
  // None free up to 65535: that service runs without an ops port rather than the stack failing.
  expect(await freeOpsPorts({ WARREN_OPS_PORT: '65533' }, names, '127.0.0.1', (p) => Promise.resolve(p !== 65535))).toEqual({ 'calculator-1': '65533', 'calculator-2': '65534', audit: '' });
});

it('portFree tells a port held by a listener from a free one', async () => {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  try {
    expect(await portFree(port, '127.0.0.1')).toBe(false);
    const chosen = await freeOpsPorts({ WARREN_OPS_PORT: String(port) }, names, '127.0.0.1');
    expect(Number(chosen['calculator-1'])).toBeGreaterThan(port);
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
});
