import { WorkflowUpdateFailedError } from '@temporalio/client';
import type { Command } from 'commander';
import { resumeBatchUpdate } from '../../workflows/definitions';
import type { BatchResumeAnswer } from '../../workflows/batch-types';
import { batchProgress, cliEnv, findWorkflow, withTemporal, type FoundWorkflow } from '../lib/context';
import { CliError } from '../lib/errors';
import { EXIT } from '../lib/exit';
import { printJson, say } from '../lib/output';

/**
 * Resumes a batch paused by an account-level refusal (the `resumeBatch` update to the batch, or to
 * each paused partition): it starts items again and its waiting items submit again. Exit 2 when it
 * is not paused (the validator's reason), 1 when it has closed.
 */
async function resumeBatch(found: FoundWorkflow): Promise<BatchResumeAnswer & { workflowIds: string[] }> {
  if (found.kind !== 'batch') throw new CliError(`${found.workflowId} is not a batch (give batch/<id>)`, EXIT.usage);
  if (found.status !== 'RUNNING')
    throw new CliError(
      `${found.workflowId} has closed (${found.status.toLowerCase()}); nothing to resume`,
      EXIT.failed,
    );
  const progress = await batchProgress(found.handle);
  const client = found.handle.client;
  const targets = progress.partitions ?? [found.workflowId];
  const answers: (BatchResumeAnswer & { workflowId: string })[] = [];
  const refusals: string[] = [];
  for (const workflowId of targets) {
    try {
      const answer = await client.getHandle(workflowId).executeUpdate(resumeBatchUpdate);
      answers.push({ workflowId, ...answer });
    } catch (error) {
      if (!(error instanceof WorkflowUpdateFailedError)) throw error;
      refusals.push(`${workflowId}: ${error.cause?.message ?? error.message}`);
    }
  }
  if (answers.length === 0) throw new CliError(`resumeBatch refused by ${refusals.join('; ')}`, EXIT.usage);
  return {
    code: answers.map((a) => a.code).join(', '),
    resumed: answers.reduce((n, a) => n + a.resumed, 0),
    workflowIds: answers.map((a) => a.workflowId),
  };
}

/** `reelflow batch resume batch/<id>`: goes on after a top-up or a new key (docs/batches.md, "Paused batches"). */
export function registerBatchResumeCommand(batch: Command): void {
  batch
    .command('resume')
    .description(
      'Resume a batch paused by an account-level refusal (credits, key, 429s) once the account can take submits again; ' +
        'its waiting items submit again (exit 0 resumed, 2 not paused, 4 unknown id)',
    )
    .argument('<id>', 'batch/<name> or a bare name')
    .option('--json', "print the batch's answer as JSON", false)
    // `--json` after the id is read by `batch` itself, which has one too: take either.
    .action(async (id: string, _options: unknown, command: Command) => {
      const options = command.optsWithGlobals<{ json: boolean }>();
      await withTemporal(cliEnv(), async ({ client }) => {
        const found = await findWorkflow(client, id.includes('/') ? id : `batch/${id}`);
        const answer = await resumeBatch(found);
        if (options.json) printJson({ workflowId: found.workflowId, ...answer });
        else say(`${found.workflowId}: resumed after ${answer.code}; ${answer.resumed} waiting item(s) submit again`);
      });
    });
}
