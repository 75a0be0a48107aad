// `npm start` gives every service process an ops port of its own (scripts/start-ops.ts).
import { defaultOpsBase, opsPorts } from '../../scripts/start-ops';

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
