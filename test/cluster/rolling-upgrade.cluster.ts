import * as fs from 'node:fs';
import * as path from 'node:path';
import { runUpgradeScenario, type UpgradeRunFigures } from './upgrade-run';

/**
 * `npm run test:cluster:upgrade` (`npm run build`, then this file; also part of `npm run test:cluster`;
 * not part of `npm test`: it starts a Temporal cluster). UPGRADE_PIPELINES (default 4) pipelines on
 * build A, then build B deployed beside it by `reelflow deploy`, then as many on B. The figures go to
 * .reelflow/upgrade-run.json. UPGRADE_TEMPORAL_ADDRESS runs it against a server already running (a dev
 * server: `temporal server start-dev`) instead of a new cluster.
 */
const COUNT = Number(process.env.UPGRADE_PIPELINES ?? 4);
let figures: UpgradeRunFigures;

beforeAll(async () => {
  figures = await runUpgradeScenario({
    count: COUNT,
    ...(process.env.UPGRADE_TEMPORAL_ADDRESS ? { temporalAddress: process.env.UPGRADE_TEMPORAL_ADDRESS } : {}),
    log: (line) => process.stdout.write(`[upgrade] ${line}\n`),
  });
  const { deploy, ...printed } = figures;
  const out = path.join(__dirname, '..', '..', '.reelflow', 'upgrade-run.json');
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(
    out,
    `${JSON.stringify({ ...printed, deployOutput: deploy.stdout, at: new Date().toISOString() }, null, 1)}\n`,
  );
}, 900_000);

describe('rolling upgrade on the Temporal cluster', () => {
  it('B was deployed and made current while every pipeline of A was open', () => {
    expect(figures.openOnAWhenBDeployed).toBe(COUNT);
    expect(figures.openOnAWhenBCurrent).toBe(COUNT);
  });

  it("A's pipelines finished on A: every workflow task by build A's worker", () => {
    expect(figures.startedOnA).toHaveLength(COUNT);
    for (const run of figures.startedOnA) {
      expect(run.status).toBe('COMPLETED');
      expect(run.buildIds.length).toBeGreaterThan(1);
      expect(new Set(run.buildIds)).toEqual(new Set([figures.buildA]));
      for (const identity of run.identities) expect(identity.startsWith(`${figures.pidA}@`)).toBe(true);
    }
  });

  it('pipelines started after the upgrade ran on B', () => {
    expect(figures.startedOnB).toHaveLength(COUNT);
    for (const run of figures.startedOnB) {
      expect(run.status).toBe('COMPLETED');
      expect(new Set(run.buildIds)).toEqual(new Set([figures.buildB]));
      for (const identity of run.identities) expect(identity.startsWith(`${figures.pidB}@`)).toBe(true);
    }
  });

  it("reelflow deploy retired A's worker only once nothing was pinned to it; B's kept running", () => {
    expect({ code: figures.deploy.code, stderr: figures.deploy.stderr }).toEqual({ code: 0, stderr: '' });
    expect(figures.deploy.stdout).toMatch(/ramping: 50% of new executions/);
    expect(figures.deploy.stdout).toMatch(/open executions pinned to reelflow:upgrade-a-/);
    expect(figures.deploy.stdout).toMatch(
      /nothing is pinned to reelflow:upgrade-a-\S+: its workers can stop\nretiring: kill -TERM/,
    );
    expect(figures.pinnedToAAtRetire).toBe(0);
    expect({ exited: figures.aExited, code: figures.aExitCode }).toEqual({ exited: true, code: 0 });
    expect(figures.bStillRunning).toBe(true);
  });
});
