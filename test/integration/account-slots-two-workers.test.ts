import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { buildWorkflowBundle } from '../../scripts/build-workflow-bundle';
import { SEARCH_ATTRIBUTE_KEYS } from '../../src/workflows/definitions';
import { startTestPostgres, type TestPostgres } from '../helpers/postgres';
import { startDevServer } from '../helpers/temporal';
import { slotsRunChecks } from '../cluster/slots-checks';
import { runSlotsScenario, type SlotsRunFigures } from '../cluster/slots-run';

/**
 * The account's slots across processes, on a dev server: two `reelflow worker` and two bridge
 * processes (from src/ through tsx) on one PostgreSQL route store, one worker SIGKILLed, one pipeline
 * terminated while it holds a slot (test/cluster/slots-run.ts; `npm run test:cluster` runs the same on
 * a Temporal cluster). The reaper's bound (30 s after a grant, then a 10 s sweep) sets its length.
 */
let env: TestWorkflowEnvironment;
let pg: TestPostgres;
let bundleDir: string;
let figures: SlotsRunFigures;

beforeAll(async () => {
  bundleDir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelflow-bundle-'));
  let workflowBundle: string;
  [env, pg, workflowBundle] = await Promise.all([
    startDevServer({ searchAttributes: SEARCH_ATTRIBUTE_KEYS }),
    startTestPostgres(),
    buildWorkflowBundle(path.join(bundleDir, 'workflow-bundle.js')),
  ]);
  figures = await runSlotsScenario({
    temporalAddress: env.address,
    namespace: 'default',
    routeStore: pg.url,
    entry: 'src',
    workflowBundle,
    pipelines: 12,
    ...(process.env.SLOTS_LOG ? { log: (line: string) => process.stdout.write(`[slots] ${line}\n`) } : {}),
  });
}, 240_000);

afterAll(async () => {
  await env?.teardown();
  pg?.close();
  if (bundleDir) fs.rmSync(bundleDir, { recursive: true, force: true });
});

describe("the account's slots with two workers and two bridges on PostgreSQL, a worker SIGKILLed", () => {
  slotsRunChecks(() => figures);
});
