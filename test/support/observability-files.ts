// deploy/observability/ read for tests: the alert rules, the Grafana dashboard,
// and every series name they use (test/unit/observability-rules.test.ts checks
// the files; test/integration/observability-metrics.int.test.ts that each name
// exists in a scrape of the running system).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';

export const observabilityDir = path.resolve(__dirname, '..', '..', 'deploy', 'observability');

interface Rule {
  readonly alert?: string;
  readonly expr: string;
}

export interface Dashboard {
  readonly uid: string;
  readonly panels: readonly { readonly title: string; readonly datasource?: { readonly uid?: string }; readonly targets: readonly { readonly expr: string }[] }[];
}

export function alertRules(): Rule[] {
  const file = parse(readFileSync(path.join(observabilityDir, 'alerts.yml'), 'utf8')) as { groups: { rules: Rule[] }[] };
  return file.groups.flatMap((g) => g.rules);
}

export function dashboard(): Dashboard {
  return JSON.parse(readFileSync(path.join(observabilityDir, 'grafana', 'dashboards', 'warren.json'), 'utf8')) as Dashboard;
}

/** Warren's series names in a PromQL expression (`warren_*`; `up` and functions are Prometheus's own). */
export function seriesIn(expr: string): string[] {
  return [...expr.matchAll(/\bwarren_[a-z0-9_]+/g)].map((m) => m[0]);
}

/** Every Warren series the rules and the dashboard name, each with where it is named. */
export function namedSeries(): Map<string, string> {
  const named = new Map<string, string>();
  for (const rule of alertRules()) for (const s of seriesIn(rule.expr)) named.set(s, `alert ${rule.alert ?? '?'}`);
  for (const panel of dashboard().panels) for (const t of panel.targets) for (const s of seriesIn(t.expr)) named.set(s, `panel "${panel.title}"`);
  return named;
}
