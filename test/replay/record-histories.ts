/**
 * Records the histories the replay test replays: runs the workflow integration tests with
 * RECORD_HISTORIES=1, which makes each test save its workflows' histories under
 * test/replay/histories/current/. Histories of earlier versions stay in their own folders
 * (v1-child-workflows/: the pipeline with a child job workflow per step) and are replayed too, as
 * long as executions of that version may still be open. Run after a deliberate, compatible change:
 *
 *   npx tsx test/replay/record-histories.ts
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

const root = path.join(__dirname, '..', '..');
const dir = path.join(__dirname, 'histories', 'current');
fs.rmSync(dir, { recursive: true, force: true });
fs.mkdirSync(dir, { recursive: true });
const run = spawnSync(process.execPath, [require.resolve('jest/bin/jest'), '--runInBand', 'test/integration/workflow-'], {
  cwd: root,
  stdio: 'inherit',
  env: { ...process.env, RECORD_HISTORIES: '1' },
});
const recorded = fs.readdirSync(dir).filter((f) => f.endsWith('.json'));
console.log(`recorded ${recorded.length} histories in ${path.relative(root, dir)}: ${recorded.join(', ')}`);
process.exit(run.status ?? 1);
