// deploy/observability/: the alert rules pass `promtool check rules` and their
// unit tests (`promtool test rules alerts.test.yml`, one test per alert, each
// also showing the alert quiet on a healthy series), the scrape config passes
// `promtool check config`, and the Grafana dashboard parses, queries the
// provisioned data source and names Warren series only. That those series
// exist in a real scrape: test/integration/observability-metrics.int.test.ts.
// promtool is Debian's `prometheus` package (.ci/run installs it); without it these
// checks skip loudly, unless WARREN_REQUIRE_ALL_TIERS=1 (CI), where that fails.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { composeEnv, readCompose, repoRoot } from '../support/compose';
import { alertRules, dashboard, namedSeries, observabilityDir } from '../support/observability-files';

const promtool = spawnSync('promtool', ['--version'], { stdio: 'ignore' }).status === 0;
if (!promtool && process.env['WARREN_REQUIRE_ALL_TIERS'] === '1') throw new Error('promtool not found: apt-get install -y prometheus (.ci/run does)');
if (!promtool) process.stderr.write('observability-rules: promtool not found, its checks are skipped (apt-get install -y prometheus)\n');

function run(...args: string[]): { status: number | null; output: string } {
  const r = spawnSync('promtool', args, { cwd: observabilityDir, encoding: 'utf8' });
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

(promtool ? describe : describe.skip)('promtool', () => {
  it('accepts the alert rules', () => {
    const r = run('check', 'rules', 'alerts.yml');
    expect(r.output).toMatch(/SUCCESS: 7 rules found/);
    expect(r.status).toBe(0);
  });

  it('passes the rules\' unit tests', () => {
    const r = run('test', 'rules', 'alerts.test.yml');
    expect(r.output).toMatch(/SUCCESS/);
    expect(r.status).toBe(0);
  });

  it('accepts the scrape config', () => {
    const r = run('check', 'config', 'prometheus.yml');
    expect(r.status).toBe(0);
  });
});

describe('alert rules and their tests', () => {
  it('cover worker down, tracking degraded, DLQ growing, queue backlog and wait, error ratio, failing schedules, each with a test that fires it', () => {
    const alerts = alertRules().map((r) => r.alert);
    expect(alerts).toEqual(['WarrenWorkerDown', 'WarrenTrackingDegraded', 'WarrenDeadLettersGrowing', 'WarrenQueueBacklog', 'WarrenQueueWaitHigh', 'WarrenErrorRatio', 'WarrenScheduleFailing']);
    const tests = parse(readFileSync(path.join(observabilityDir, 'alerts.test.yml'), 'utf8')) as { tests: { alert_rule_test: { alertname: string; exp_alerts?: unknown[] }[] }[] };
    const cases = tests.tests.flatMap((t) => t.alert_rule_test);
    for (const alert of alerts) {
      expect(cases.filter((c) => c.alertname === alert && (c.exp_alerts?.length ?? 0) > 0)).not.toHaveLength(0);
      expect(cases.filter((c) => c.alertname === alert && (c.exp_alerts?.length ?? 0) === 0)).not.toHaveLength(0);
    }
  });
});

describe('the Grafana dashboard', () => {
  it('parses, queries the provisioned Prometheus data source, and shows throughput, latency, errors, queues, dead letters and tracking', () => {
    const d = dashboard();
    const datasources = parse(readFileSync(path.join(observabilityDir, 'grafana', 'provisioning', 'datasources', 'prometheus.yml'), 'utf8')) as { datasources: { uid: string }[] };
    const uid = datasources.datasources[0]?.uid;
    expect(d.panels.length).toBeGreaterThanOrEqual(6);
    for (const panel of d.panels) {
      expect(panel.datasource?.uid).toBe(uid);
      expect(panel.targets.length).toBeGreaterThan(0);
    }
    const named = [...namedSeries().keys()];
    for (const series of ['warren_worker_requests_total', 'warren_worker_handler_duration_seconds_bucket', 'warren_worker_errors_total', 'warren_service_queue_messages', 'warren_service_dead_letter_messages', 'warren_worker_tracking_state']) {
      expect(named).toContain(series);
    }
  });
});

describe("docker-compose.yml's observability profile", () => {
  const compose = readCompose('docker-compose.yml');
  const prometheus = compose.services['prometheus'];
  const grafana = compose.services['grafana'];

  it('runs Prometheus and Grafana only under the profile, on files of deploy/observability/', () => {
    expect(prometheus?.profiles).toEqual(['observability']);
    expect(grafana?.profiles).toEqual(['observability']);
    // Everything else starts without the profile.
    for (const [name, s] of Object.entries(compose.services)) if (name !== 'prometheus' && name !== 'grafana') expect({ name, profiles: s.profiles }).toEqual({ name, profiles: undefined });
    for (const s of [prometheus, grafana]) {
      for (const v of s?.volumes ?? []) {
        const source = v.split(':')[0] as string;
        if (source.startsWith('./')) expect(existsSync(path.join(repoRoot, source))).toBe(true);
      }
    }
    expect(prometheus?.volumes).toContain('./deploy/observability:/etc/prometheus:ro');
  });

  it('scrapes the broker on its gateway port and every worker service on its ops port', () => {
    const config = parse(readFileSync(path.join(observabilityDir, 'prometheus.yml'), 'utf8')) as {
      scrape_configs: { job_name: string; static_configs?: { targets: string[] }[]; dns_sd_configs?: { names: string[]; port: number }[] }[];
    };
    const job = (name: string): (typeof config.scrape_configs)[number] | undefined => config.scrape_configs.find((j) => j.job_name === name);
    const broker = compose.services['broker'];
    expect(job('warren-broker')?.static_configs?.[0]?.targets).toEqual([`broker:${broker ? composeEnv(broker)['GATEWAY_PORT'] : ''}`]);
    const workers = Object.entries(compose.services).filter(([, s]) => s.build !== undefined && composeEnv(s)['WARREN_OPS_PORT'] !== undefined);
    const dns = job('warren-workers')?.dns_sd_configs?.[0];
    expect(new Set(dns?.names)).toEqual(new Set(workers.map(([name]) => name)));
    for (const [, s] of workers) expect(String(dns?.port)).toBe(composeEnv(s)['WARREN_OPS_PORT']);
  });
});
