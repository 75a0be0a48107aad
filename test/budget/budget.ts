/**
 * The per-call cost budget (call-budget.json) and the check against it. A figure measured above its
 * budget plus the file's tolerance fails; a figure the file does not name has a budget of 0, so a
 * new kind of work on every call (a new Redis command, a new AMQP method) fails too.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { PerCall } from './measure';

export type Side = 'caller' | 'service';

/**
 * A figure's budget per call: a number, or `max` plus so much per unit of other figures measured in
 * the same run (`plus`: a figure of the same side, or of the other one as `caller <figure>` /
 * `service <figure>`), for work that follows a timing-dependent figure: the gateway marks a call
 * queued (a SET, later an unmark) only when it waits over 100 ms unanswered.
 */
export type Limit = number | { readonly max: number; readonly plus?: Readonly<Record<string, number>> };

export interface BudgetFile {
  readonly comment: readonly string[];
  readonly figures: Readonly<Record<string, string>>;
  /**
   * Added to every budget: `count` (per call, absolute), `bytes` (a fraction of the budget), and
   * `perSecond` (so much per second of the measured window, for work on a clock).
   */
  readonly tolerance: {
    readonly count: number;
    readonly bytes: number;
    readonly perSecond: { readonly count: number; readonly bytes: number };
    /** Bytes allowed per message published or delivered beyond the budget's count (an announcement, many KB, is one). */
    readonly perExtraMessage: number;
  };
  readonly scenarios: Readonly<Record<string, Readonly<Record<Side, Readonly<Record<string, Limit>>>>>>;
}

export const BUDGET_FILE = join(__dirname, 'call-budget.json');

export function readBudget(file = BUDGET_FILE): BudgetFile {
  return JSON.parse(readFileSync(file, 'utf8')) as BudgetFile;
}

const isBytes = (figure: string): boolean => figure.endsWith(' bytes');

/** A figure of `side` or, named `caller …` / `service …`, of either side. */
function figureOf(measured: PerCall, side: Side, name: string): number {
  for (const other of ['caller', 'service'] as const) {
    if (name.startsWith(`${other} `)) return measured[other][name.slice(other.length + 1)] ?? 0;
  }
  return measured[side][name] ?? 0;
}

/** A limit's budget in one run: `max`, plus its `plus` figures as measured in the same run. */
export function budgetOf(limit: Limit | undefined, measured: PerCall, side: Side): number {
  if (limit === undefined) return 0;
  if (typeof limit === 'number') return limit;
  return Object.entries(limit.plus ?? {}).reduce((sum, [figure, per]) => sum + per * figureOf(measured, side, figure), limit.max);
}

/** The messages whose content a bytes figure carries. */
const MESSAGES: Readonly<Record<string, string>> = { 'amqp sent bytes': 'amqp sent basic.publish', 'amqp received bytes': 'amqp received basic.deliver' };

/** The most a figure may measure: its budget (0 when absent) plus the tolerances. */
export function allowed(budget: BudgetFile, figure: string, value: number, run: { readonly measured: PerCall; readonly side: Side; readonly limits: Readonly<Record<string, Limit>> }): number {
  const t = budget.tolerance;
  const seconds = run.measured.seconds;
  if (!isBytes(figure)) return value + t.count + t.perSecond.count * seconds;
  const messages = MESSAGES[figure];
  const extra = messages === undefined ? 0 : Math.max(0, (run.measured[run.side][messages] ?? 0) - budgetOf(run.limits[messages], run.measured, run.side));
  return value * (1 + t.bytes) + t.perSecond.bytes * seconds + t.perExtraMessage * extra;
}

export interface Overrun {
  readonly scenario: string;
  readonly side: Side;
  readonly figure: string;
  readonly measured: number;
  readonly budget: number;
  readonly allowed: number;
}

/** Every figure of `measured` over its allowance. */
export function overruns(budget: BudgetFile, scenario: string, measured: PerCall): Overrun[] {
  const limits = budget.scenarios[scenario];
  if (limits === undefined) throw new Error(`call-budget.json has no scenario "${scenario}"`);
  const out: Overrun[] = [];
  for (const side of ['caller', 'service'] as const) {
    for (const [figure, value] of Object.entries(measured[side])) {
      const own = budgetOf(limits[side][figure], measured, side);
      const limit = allowed(budget, figure, own, { measured, side, limits: limits[side] });
      if (value > limit + 1e-9) out.push({ scenario, side, figure, measured: value, budget: own, allowed: limit });
    }
  }
  return out;
}

const fmt = (n: number): string => (Number.isInteger(n) ? String(n) : n.toFixed(n >= 100 ? 1 : 3));

/** The failure message: which figure, measured against budget, and what raising it takes. */
export function describeOverruns(list: readonly Overrun[]): string {
  return [
    'Per-call cost over budget (test/budget/call-budget.json):',
    ...list.map((o) => `  ${o.scenario} / ${o.side} / ${o.figure}: measured ${fmt(o.measured)} per call, budget ${fmt(o.budget)} (allowed ${fmt(o.allowed)})`),
    'If the extra work is meant: raise the figure in call-budget.json, and put in the same commit a bench figure',
    '(npm run bench, docs/benchmarks.md "The per-call budget") showing what it costs.',
  ].join('\n');
}

/** Measured figures as a table, for the log. */
export function formatMeasured(scenario: string, measured: PerCall): string {
  const rows = (['caller', 'service'] as const).flatMap((side) => Object.entries(measured[side]).sort(([a], [b]) => a.localeCompare(b)).map(([figure, v]) => `  ${side.padEnd(7)} ${figure.padEnd(44)} ${fmt(v)}`));
  return [`${scenario} (${(measured.seconds * 1000).toFixed(3)} ms of window per call):`, ...rows].join('\n');
}
