import { WorkflowUpdateFailedError, type WorkflowHandle } from '@temporalio/client';
import type { UpdateDefinition } from '@temporalio/common';
import type { OperatorAnswer } from '../../workflows/pipeline-types';
import { cliEnv, findWorkflow, withTemporal, type FoundWorkflow } from './context';
import { CliError } from './errors';
import { EXIT } from './exit';
import { printJson, say } from './output';

/**
 * Sends an operator update (cancelStep, raiseBudget, retryStep, …) to a pipeline and returns its
 * answer. A refusal by the update's validator becomes exit 2 with the validator's reason; a
 * pipeline that has closed, or a worker without the update (a pipeline started before it
 * existed), is said as such.
 */
export async function sendOperatorUpdate<T>(
  found: FoundWorkflow,
  update: UpdateDefinition<OperatorAnswer, [T]>,
  arg: T,
): Promise<OperatorAnswer> {
  if (found.kind !== 'pipeline')
    throw new CliError(
      `${found.workflowId} is a batch; send ${update.name} to one of its pipelines (see \`reelflow status ${found.workflowId}\`)`,
      EXIT.usage,
    );
  if (found.status !== 'RUNNING')
    throw new CliError(
      `${found.workflowId} has closed (${found.status.toLowerCase()}); ${update.name} applies to running pipelines only`,
      EXIT.failed,
    );
  try {
    return (await (found.handle as WorkflowHandle).executeUpdate(update.name, { args: [arg] })) as OperatorAnswer;
  } catch (error) {
    if (error instanceof WorkflowUpdateFailedError) {
      const reason = error.cause?.message ?? error.message;
      throw new CliError(`${update.name} refused by ${found.workflowId}: ${reason}`, EXIT.usage);
    }
    const message = error instanceof Error ? error.message : String(error);
    if (/unknown update|update handler|not found.*update/i.test(message)) {
      throw new CliError(
        `${found.workflowId} does not take ${update.name} (started by an older reelflow): ${message}`,
        EXIT.usage,
      );
    }
    throw error;
  }
}

/** `reelflow budget|retry …`: sends `update` with `arg` to the pipeline `id` and prints its answer. */
export async function runOperatorUpdate<T>(
  id: string,
  update: UpdateDefinition<OperatorAnswer, [T]>,
  arg: T,
  json: boolean,
): Promise<void> {
  await withTemporal(cliEnv(), async ({ client }) => {
    const found = await findWorkflow(client, id);
    const answer = await sendOperatorUpdate(found, update, arg);
    if (json) printJson({ workflowId: found.workflowId, ...answer });
    else say(`${found.workflowId}: ${answer.message}`);
  });
}
