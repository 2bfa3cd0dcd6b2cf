import * as fs from 'node:fs';
import * as path from 'node:path';
import { HISTORY_SHARDS } from '../../scripts/cluster/index';
import { expectLedgersAgree } from '../faults/fault-run';
import { runClusterScenario, type ClusterRunFigures } from './cluster-run';

/**
 * `npm run test:cluster` (`npm run build`, then this file; not part of `npm test`: it builds a Temporal
 * cluster and runs for minutes).
 * CLUSTER_PIPELINES (default 100) pipelines on a real Temporal cluster on PostgreSQL while one worker,
 * one bridge, the matching role, the history role and PostgreSQL are each SIGKILLed once,
 * CLUSTER_KILL_SPACING_MS (default 12000) apart. The figures go to .reelflow/cluster-run.json and into
 * docs/production.md by hand.
 */
const COUNT = Number(process.env.CLUSTER_PIPELINES ?? 100);
const SPACING_MS = Number(process.env.CLUSTER_KILL_SPACING_MS ?? 12_000);
let figures: ClusterRunFigures;

beforeAll(async () => {
  figures = await runClusterScenario({
    count: COUNT,
    spacingMs: SPACING_MS,
    log: (line) => process.stdout.write(`[cluster] ${line}\n`),
  });
  const { logs, clusterLogs, secrets, failureReasons, ...printed } = figures;
  void logs;
  void clusterLogs;
  void secrets;
  const out = path.join(__dirname, '..', '..', '.reelflow', 'cluster-run.json');
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(out, `${JSON.stringify({ ...printed, failureReasons, at: new Date().toISOString() }, null, 1)}\n`);
  process.stdout.write(
    `[cluster] figures ${JSON.stringify(printed, null, 1)}\n[cluster] failures ${JSON.stringify(failureReasons, null, 1)}\n`,
  );
}, 1_800_000);

describe(`Temporal cluster on PostgreSQL, ${COUNT} pipelines, five SIGKILLs`, () => {
  it('ran the production topology: four Temporal roles, service, two workers, two bridges', () => {
    expect(figures.processes).toEqual({ 'temporal roles': 4, service: 1, workers: 2, bridges: 2 });
    expect(figures.historyShards).toBeGreaterThanOrEqual(4);
    expect(figures.historyShards).toBe(HISTORY_SHARDS);
  });

  it('killed each of worker, bridge, matching, history and PostgreSQL once, while pipelines were in flight', () => {
    expect(figures.restarts).toEqual({
      worker: 1,
      bridge: 1,
      'temporal-matching': 1,
      'temporal-history': 1,
      postgresql: 1,
    });
    for (const kill of figures.kills)
      expect({ target: kill.target, inFlight: kill.inFlight > 0 }).toEqual({ target: kill.target, inFlight: true });
  });

  it('every pipeline reaches the end its faults explain', () => {
    expect(figures.completed + figures.failed).toBe(COUNT);
    expect(figures.unexplained).toEqual([]);
    expect(figures.completed).toBeGreaterThan(0);
    expect(figures.missingOutputs).toEqual([]);
  });

  it('the service faults really happened: dropped and duplicated deliveries', () => {
    expect(figures.faults.deliveriesDropped).toBeGreaterThan(0);
    expect(figures.faults.deliveriesDuplicated).toBeGreaterThan(0);
  });

  it('no step billed twice, no idempotency key made two jobs', () => {
    expect(figures.duplicatesFound).toBe(0);
    expect(figures.keysWithTwoJobs).toBe(0);
  });

  it("the ledgers equal the service's charges", () => {
    expectLedgersAgree(figures);
  });

  it("the cluster's visibility store lists every pipeline with its end state", () => {
    expect(figures.visibility).toEqual({ completed: figures.completed, failed: figures.failed });
  });

  it('work was spread over more than one history shard', () => {
    expect(Object.keys(figures.executionsPerShard).length).toBeGreaterThan(1);
  });

  it('no workflow task failed on non-determinism, and no secret reached any log', () => {
    expect(figures.logs).not.toMatch(/nondeterminism|TMPRL1100/i);
    for (const secret of figures.secrets) {
      expect(figures.logs.includes(secret)).toBe(false);
      expect(figures.clusterLogs.includes(secret)).toBe(false);
    }
  });
});
