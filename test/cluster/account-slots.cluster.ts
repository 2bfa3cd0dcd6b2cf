import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { routeStoreUrl, startCluster, stopCluster } from '../../scripts/cluster/index';
import { DIST_WORKFLOW_BUNDLE, requireBuild } from './processes';
import { slotsRunChecks } from './slots-checks';
import { runSlotsScenario, type SlotsRunFigures } from './slots-run';

/**
 * `npm run test:cluster` (`npm run build` first; not part of `npm test`): the account's slots on a
 * real Temporal cluster on PostgreSQL, with two `reelflow worker` and two bridge processes from dist/
 * sharing the cluster's PostgreSQL as their route store; one worker SIGKILLed, one pipeline
 * terminated while it holds a slot (./slots-run.ts). SLOTS_PIPELINES (default 16) pipelines.
 */
const COUNT = Number(process.env.SLOTS_PIPELINES ?? 16);
let figures: SlotsRunFigures;

beforeAll(async () => {
  requireBuild();
  const log = (line: string) => process.stdout.write(`[slots] ${line}\n`);
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'reelflow-slots-cluster-'));
  // PostgreSQL runs as its own user: it must be able to walk into its data directory.
  fs.chmodSync(scratch, 0o755);
  const dir = path.join(scratch, 'cluster');
  try {
    const cluster = await startCluster({ dir, log: (line) => log(`cluster: ${line}`) });
    figures = await runSlotsScenario({
      temporalAddress: cluster.address,
      namespace: cluster.record.namespace,
      routeStore: routeStoreUrl(cluster),
      entry: 'dist',
      workflowBundle: DIST_WORKFLOW_BUNDLE,
      pipelines: COUNT,
      log,
    });
  } finally {
    await stopCluster(dir, (line) => log(`cluster: ${line}`));
    fs.rmSync(scratch, { recursive: true, force: true });
  }
  const { logs, ...printed } = figures;
  void logs;
  log(`figures ${JSON.stringify(printed, null, 1)}`);
}, 900_000);

describe(`the account's slots on a Temporal cluster: two workers, two bridges, one PostgreSQL route store`, () => {
  slotsRunChecks(() => figures);
});
