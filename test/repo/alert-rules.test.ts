import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * reelflow's alert rules (deploy/prometheus/alerts.yml) checked and unit-tested by Prometheus's own
 * promtool: each alert fires on the series that should raise it and stays quiet just below
 * (deploy/prometheus/alerts.test.yml). promtool comes from scripts/ensure-promtool.js (`npm test` runs it).
 */

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { resolvePromtool } = require('../../scripts/promtool-tools') as {
  resolvePromtool(options?: { install?: boolean }): { path: string; source: string } | null;
};
// eslint-disable-next-line @typescript-eslint/no-require-imports
const yaml = require('js-yaml') as { load(text: string): unknown };

const DIR = join(__dirname, '../../deploy/prometheus');
const read = (file: string) => readFileSync(join(DIR, file), 'utf8');

function promtool(...args: string[]): { code: number | null; output: string } {
  const found = resolvePromtool();
  if (!found) throw new Error('promtool is missing: run `node scripts/ensure-promtool.js` (npm test does)');
  const run = spawnSync(found.path, args, { cwd: DIR, encoding: 'utf8', timeout: 60_000 });
  return { code: run.status, output: `${run.stdout}${run.stderr}` };
}

interface RuleGroups {
  groups: { name: string; rules: { alert?: string }[] }[];
}
interface RuleTests {
  tests: { alert_rule_test?: { alertname: string; exp_alerts: unknown[] }[] }[];
}

describe('alert rules (deploy/prometheus/alerts.yml)', () => {
  it('pass promtool check rules', () => {
    const result = promtool('check', 'rules', 'alerts.yml');
    expect(result).toEqual({ code: 0, output: expect.stringContaining('SUCCESS') });
  });

  it("pass promtool's unit tests", () => {
    const result = promtool('test', 'rules', 'alerts.test.yml');
    expect(result).toEqual({ code: 0, output: expect.stringContaining('SUCCESS') });
  });

  it('every alert is tested firing and quiet, and the tests fail when a rule changes', () => {
    const alerts = (yaml.load(read('alerts.yml')) as RuleGroups).groups.flatMap((g) =>
      g.rules.flatMap((r) => (r.alert ? [r.alert] : [])),
    );
    const cases = (yaml.load(read('alerts.test.yml')) as RuleTests).tests.flatMap((t) => t.alert_rule_test ?? []);
    for (const alert of alerts) {
      const mine = cases.filter((c) => c.alertname === alert);
      expect({ alert, fires: mine.some((c) => c.exp_alerts.length > 0) }).toEqual({ alert, fires: true });
    }
    expect(alerts).toEqual(
      expect.arrayContaining([
        'ReelflowInboxBacklog',
        'ReelflowInboxOldestUndelivered',
        'ReelflowNonDeterminism',
        'ReelflowWorkflowTaskFailures',
        'ReelflowActivitySlotsSaturated',
        'ReelflowServiceRateLimited',
        'ReelflowRefundRate',
        'ReelflowWorkerDown',
      ]),
    );
  });

  it('Prometheus in compose loads them', () => {
    const config = yaml.load(read('prometheus.yml')) as { rule_files: string[] };
    expect(config.rule_files).toEqual(['/etc/prometheus/alerts.yml']);
    const compose = readFileSync(join(__dirname, '../../docker-compose.yml'), 'utf8');
    expect(compose).toContain('./deploy/prometheus/alerts.yml:/etc/prometheus/alerts.yml:ro');
    // The bridges are scraped on their metrics port, not the webhook listener.
    const jobs = (
      yaml.load(read('prometheus.yml')) as {
        scrape_configs: { job_name: string; static_configs: { targets: string[] }[] }[];
      }
    ).scrape_configs;
    const bridgeTargets = jobs.find((j) => j.job_name === 'reelflow-bridge')?.static_configs[0]?.targets;
    expect(bridgeTargets).toEqual(['bridge-1:9091', 'bridge-2:9091']);
    expect(compose).toMatch(/REELFLOW_BRIDGE_METRICS_PORT: '9091'/);
  });
});
