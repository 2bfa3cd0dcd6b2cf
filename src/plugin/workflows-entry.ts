import { mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { WorkerOptions } from '@temporalio/worker';
import { ReelflowPluginOptionsError } from './errors';

/** reelflow's own workflows module (src/workflows/index.ts, or its compiled dist/workflows/index.js). */
export function reelflowWorkflowsPath(): string {
  return require.resolve('../workflows');
}

/**
 * A workflows entry exporting the caller's workflows and reelflow's: webpack bundles it like any
 * `workflowsPath`. Written once per worker start into a fresh temporary directory, beside a link to the
 * node_modules that holds the caller's `@temporalio/workflow` (the SDK's bundler resolves its own
 * modules from the entry's directory).
 */
function combinedWorkflowsEntry(own: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'reelflow-workflows-'));
  const sdk = require.resolve('@temporalio/workflow/package.json', { paths: [dirname(own)] });
  symlinkSync(dirname(dirname(dirname(sdk))), join(dir, 'node_modules'), 'dir');
  const entry = join(dir, 'workflows.js');
  writeFileSync(
    entry,
    `export * from ${JSON.stringify(own)};\nexport * from ${JSON.stringify(reelflowWorkflowsPath())};\n`,
  );
  return entry;
}

/**
 * The workflow source of a worker (or replay worker) that also runs reelflow's workflow types: reelflow's
 * module alone, or an entry exporting the worker's own and reelflow's. A prebuilt bundle cannot be added
 * to, so it is refused, naming the `workflows` option.
 */
export function withWorkflows(
  worker: Pick<WorkerOptions, 'workflowsPath' | 'workflowBundle'>,
): Pick<WorkerOptions, 'workflowsPath'> {
  if (worker.workflowBundle)
    throw new ReelflowPluginOptionsError(
      `reelflowPlugin option "workflows": cannot add reelflow's workflows to a prebuilt workflowBundle: give the worker a workflowsPath (or none) instead`,
    );
  return {
    workflowsPath: worker.workflowsPath ? combinedWorkflowsEntry(worker.workflowsPath) : reelflowWorkflowsPath(),
  };
}
