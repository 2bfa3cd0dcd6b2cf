import { WorkflowUpdateFailedError } from '@temporalio/client';
import type { Command } from 'commander';
import { raiseBatchBudgetUpdate } from '../../workflows/definitions';
import { raiseBudgetUpdate } from '../../workflows/definitions';
import { batchProgress, cliEnv, findWorkflow, withTemporal, type FoundWorkflow } from '../lib/context';
import { CliError } from '../lib/errors';
import { EXIT } from '../lib/exit';
import { printJson, say } from '../lib/output';
import { sendOperatorUpdate } from '../lib/operator';

/**
 * Raises a running batch's budget (the `raiseBatchBudget` update); a partitioned batch's partitions
 * each get their share, as they got of the first budget. The validator's refusal is exit 2.
 */
async function raiseBatchBudget(found: FoundWorkflow, credits: number): Promise<{ budgetCredits: number }> {
  if (found.status !== 'RUNNING')
    throw new CliError(
      `${found.workflowId} has closed (${found.status.toLowerCase()}); re-run what it did not finish with reelflow batch --rerun-failed ${found.workflowId}`,
      EXIT.failed,
    );
  const progress = await batchProgress(found.handle);
  const targets = progress.partitions ?? [found.workflowId];
  const share = Math.floor(credits / targets.length);
  try {
    await Promise.all(
      targets.map((id) => found.handle.client.getHandle(id).executeUpdate(raiseBatchBudgetUpdate, { args: [share] })),
    );
  } catch (error) {
    if (error instanceof WorkflowUpdateFailedError)
      throw new CliError(
        `raiseBatchBudget refused by ${found.workflowId}: ${error.cause?.message ?? error.message}`,
        EXIT.usage,
      );
    throw error;
  }
  return { budgetCredits: credits };
}

/** `reelflow budget <id> <credits>`: raise a running pipeline's or batch's budget. */
export function registerBudgetCommand(program: Command): void {
  program
    .command('budget')
    .description(
      'Raise the credit budget of a running pipeline or batch (exit 0 raised, 2 refused with the reason, 4 unknown id)',
    )
    .argument('<id>', 'pipeline/<name>, batch/<name> or a bare name')
    .argument(
      '<credits>',
      'the new budget in credits: a whole number above the current budget (a pipeline: and not below what is spent)',
    )
    .option('--json', "print the workflow's answer as JSON", false)
    .action(async (id: string, creditsText: string, options: { json: boolean }) => {
      // The validator decides; here only what cannot be a number is refused without asking it.
      const credits = Number(creditsText);
      if (!/^\d+$/.test(creditsText) || !Number.isSafeInteger(credits))
        throw new CliError(`credits: "${creditsText}" is not a whole number of credits`, EXIT.usage);
      await withTemporal(cliEnv(), async ({ client }) => {
        const found = await findWorkflow(client, id);
        if (found.kind === 'batch') {
          const answer = await raiseBatchBudget(found, credits);
          if (options.json) printJson({ workflowId: found.workflowId, ...answer });
          else say(`${found.workflowId}: budget raised to ${answer.budgetCredits} credits`);
          return;
        }
        const answer = await sendOperatorUpdate(found, raiseBudgetUpdate, { credits });
        if (options.json) printJson({ workflowId: found.workflowId, ...answer });
        else say(`${found.workflowId}: ${answer.message}`);
      });
    });
}
