import type { Command } from 'commander';
import { batchProgress, cliEnv, findWorkflow, pipelineSummary, withTemporal } from '../context';
import { batchLines, pipelineLines, printJson, say } from '../output';
import { sendOperatorUpdate } from '../operator';
import { cancelStepUpdate } from '../../workflows/operator-updates';

/** `reelflow cancel <id>`: request cancellation, wait for the workflow to close, print the report. */
export function registerCancelCommand(program: Command): void {
  program
    .command('cancel')
    .description('Cancel a pipeline or batch, wait until it has closed, and print what each step ended as (exit 0 closed, 4 unknown id)')
    .argument('<id>', 'workflow id (pipeline/<name>, batch/<name>) or a bare name')
    .option('--step <step>', 'cancel only this step of a pipeline (its job is cancelled and refunded; no later step starts): the cancelStep update, refused with a reason for a step that is over')
    .option('--reason <text>', 'why (kept in the step\'s error and shown in the Temporal UI); with --step')
    .option('--json', 'print the final report as JSON', false)
    .action(async (id: string, options: { json: boolean; step?: string; reason?: string }) => {
      const env = cliEnv();
      await withTemporal(env, async ({ client }) => {
        const found = await findWorkflow(client, id);
        if (options.step !== undefined) {
          const answer = await sendOperatorUpdate(found, cancelStepUpdate, { step: options.step, ...(options.reason ? { reason: options.reason } : {}) });
          say(`${found.workflowId}: ${answer.message}; waiting for it to close`, options.json);
          await found.handle.result().catch(() => undefined);
        } else if (found.status === 'RUNNING') {
          await found.handle.cancel();
          say(`cancellation requested for ${found.workflowId}; waiting for it to close`, options.json);
          // The workflow cancels its running service jobs (refunds) before it closes.
          await found.handle.result().catch(() => undefined);
        } else {
          say(`${found.workflowId} had already closed (${found.status.toLowerCase()})`, options.json);
        }
        const closed = await found.handle.describe();
        const progress = found.kind === 'pipeline' ? await pipelineSummary(found.handle) : await batchProgress(found.handle);
        if (options.json) {
          printJson({ kind: found.kind, workflowId: found.workflowId, temporalStatus: closed.status.name, progress });
          return;
        }
        const lines = found.kind === 'pipeline' ? pipelineLines(progress as Awaited<ReturnType<typeof pipelineSummary>>, found.workflowId) : batchLines(progress as Awaited<ReturnType<typeof batchProgress>>, found.workflowId);
        say(lines.join('\n'));
      });
    });
}
