/**
 * `npm run record-histories`: records the workflow histories the replay test replays, from the
 * current code. Runs the workflow integration tests (each starts its own Temporal dev server, the
 * local service and a worker) with RECORD_HISTORIES=1, which makes them save the histories of the
 * scenarios that hit each workflow type under test/replay/histories/current/. Only the current
 * build's histories are kept: with Worker Versioning a pinned execution finishes on the build it
 * started on (docs/safe-deploys.md). Run after changing workflow code, then `npx jest test/replay`.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

const root = path.join(__dirname, '..');
const dir = path.join(root, 'test', 'replay', 'histories', 'current');
// The route workflow's histories stay: builds since the route store never start one, so no scenario can
// record them again, and the route workflow is still registered for pipelines pinned to older builds.
fs.mkdirSync(dir, { recursive: true });
for (const file of fs.readdirSync(dir)) if (!file.startsWith('route-')) fs.rmSync(path.join(dir, file));
const run = spawnSync(
  process.execPath,
  [
    require.resolve('jest/bin/jest'),
    '--runInBand',
    'test/integration/workflow-',
    'test/integration/cli-commands',
    'test/integration/history-footprint',
  ],
  {
    cwd: root,
    stdio: 'inherit',
    env: { ...process.env, RECORD_HISTORIES: '1' },
  },
);
const recorded = fs.readdirSync(dir).filter((f) => f.endsWith('.json'));
console.log(`recorded ${recorded.length} histories in ${path.relative(root, dir)}: ${recorded.join(', ')}`);
process.exit(run.status ?? 1);
