/**
 * `npm run record-histories`: records the workflow histories the replay test replays, from the
 * current code. Runs the workflow integration tests (each starts its own Temporal dev server, the
 * local service and a worker) with RECORD_HISTORIES=1, which makes them save the histories of the
 * scenarios that hit each workflow type and patch branch under test/replay/histories/current/.
 * Histories of earlier versions stay in their own folders and are replayed too, as long as
 * executions of that version may still be open: v1-child-workflows/ (the pipeline with a child job
 * workflow per step: every job.ts patch's old branch), v2-before-preflight/ (the one-workflow
 * pipeline before the preflight, early-status-check, archive, cancel-before-submit, never-abandon and
 * ambiguous-wait patches: their old branches) and v3-batch-in-history/ (batches whose input held
 * every spec, before manifests moved into the media store). Run after a deliberate, compatible
 * change, then `npx jest test/replay` (it fails when a patch id has no history of a branch).
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

const root = path.join(__dirname, '..');
const dir = path.join(root, 'test', 'replay', 'histories', 'current');
fs.rmSync(dir, { recursive: true, force: true });
fs.mkdirSync(dir, { recursive: true });
const run = spawnSync(
  process.execPath,
  [require.resolve('jest/bin/jest'), '--runInBand', 'test/integration/workflow-', 'test/integration/cli-commands'],
  {
    cwd: root,
    stdio: 'inherit',
    env: { ...process.env, RECORD_HISTORIES: '1' },
  },
);
const recorded = fs.readdirSync(dir).filter((f) => f.endsWith('.json'));
console.log(`recorded ${recorded.length} histories in ${path.relative(root, dir)}: ${recorded.join(', ')}`);
process.exit(run.status ?? 1);
