/**
 * The per-call cost budget, counted, not timed (issue 43): a fixed number of calls, untracked and
 * tracked, at 1 and 64 in flight, through the client and through the gateway's POST /rpc, over the
 * real RabbitMQ and Redis; what each process sends and receives per call is counted by proxies
 * (rig.ts) and checked against test/budget/call-budget.json (budget.ts). `npm run test:budget`.
 * BUDGET_RECORD=<file> also appends the measured figures to that file (JSON lines), to set the budget from several runs.
 */
import { appendFileSync } from 'node:fs';
import { Teardown } from '@warren/testkit';
import { TestNamespace } from '../support/amqp';
import { describeOverruns, formatMeasured, overruns, readBudget } from './budget';
import { measure, type PerCall } from './measure';
import { startRig, type Rig, type Tracking } from './rig';

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
