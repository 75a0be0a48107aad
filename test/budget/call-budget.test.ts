/**
 * The per-call cost budget, counted, not timed (issue 43): a fixed number of calls, untracked and
 * tracked, at 1 and 64 in flight, through the client and through the gateway's POST /rpc, over the
 * real RabbitMQ and Redis; what each process sends and receives per call is counted by proxies
 * (rig.ts) and checked against test/budget/call-budget.json (budget.ts). `npm run test:budget`.
 * BUDGET_RECORD=<file> also appends the measured figures to that file (JSON lines), to set the budget from several runs.
 * System calls per call are counted in a pass of their own (strace.ts) and reported, not budgeted.
 */
import { appendFileSync } from 'node:fs';
import { Teardown } from '@warren/testkit';
import { TestNamespace } from '../support/amqp';
import { describeOverruns, formatMeasured, overruns, readBudget } from './budget';
import { measure, measureSyscalls, type PerCall } from './measure';
import { startRig, type Rig, type Tracking } from './rig';
import { straceAvailable } from './strace';

const td = new Teardown();
const ns = new TestNamespace();
let rig: Rig;

beforeAll(async () => {
  td.add(() => ns.destroy());
  rig = await startRig(ns, td);
}, 120_000);

afterAll(() => td.run());

const shapes = { 1: { calls: 300, warmup: 100 }, 64: { calls: 64 * 25, warmup: 64 * 8 } } as const;

const scenarios = (['client', 'gateway'] as const).flatMap((path) =>
  (['untracked', 'tracked'] as const).flatMap((tracking: Tracking) => ([1, 64] as const).map((concurrency) => ({ path, tracking, concurrency, name: `${path} ${tracking} c=${concurrency}` }))),
);

describe('the per-call cost budget', () => {
  it.each(scenarios)('$name stays within call-budget.json', async ({ path, tracking, concurrency, name }) => {
    const budget = readBudget();
    const measured: PerCall = await measure(rig[path](tracking), rig.all, { concurrency, ...shapes[concurrency] });
    process.stdout.write(`${formatMeasured(name, measured)}\n`);
    const record = process.env['BUDGET_RECORD'];
    if (record) appendFileSync(record, `${JSON.stringify({ scenario: name, measured })}\n`);
    const over = overruns(budget, name, measured);
    if (over.length > 0) throw new Error(describeOverruns(over));
  }, 120_000);
});

// ptrace slows the traced process down at every system call: counted in a pass of its own, after the budget's.
const strace = straceAvailable();
const withStrace = strace ? describe : describe.skip;
if (!strace) process.stderr.write('call-budget: strace is not available here; system calls per call are not counted\n');

withStrace('system calls per call (strace -c -f; reported, not budgeted)', () => {
  const traced = { 1: { calls: 200, warmup: 50 }, 64: { calls: 64 * 10, warmup: 64 * 4 } } as const;
  it.each(scenarios)('$name', async ({ path, tracking, concurrency, name }) => {
    const counted = await measureSyscalls(rig[path](tracking), rig.all, { concurrency, ...traced[concurrency] });
    const lines = Object.entries(counted).flatMap(([side, counts]) => Object.entries(counts).filter(([, v]) => v >= 0.01).sort(([, a], [, b]) => b - a).map(([call, v]) => `  ${side.padEnd(7)} ${call.padEnd(24)} ${v.toFixed(2)}`));
    process.stdout.write(`${name}, system calls per call (the service${path === 'gateway' ? ' and the broker' : ''}; the client shares the test's process with the proxies):\n${lines.join('\n')}\n`);
    const record = process.env['BUDGET_RECORD'];
    if (record) appendFileSync(record, `${JSON.stringify({ scenario: name, syscalls: counted })}\n`);
    // Counted at all (at 64 in flight one read or write serves many calls: under one per call).
    expect(counted.service?.['total'] ?? 0).toBeGreaterThan(0);
    if (path === 'gateway') expect(counted.caller?.['total'] ?? 0).toBeGreaterThan(0);
  }, 120_000);
});
