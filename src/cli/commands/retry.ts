import type { Command } from 'commander';
import { retryStepUpdate } from '../../workflows/operator-updates';
import { cliEnv, findWorkflow, withTemporal } from '../context';
import { sendOperatorUpdate } from '../operator';
import { printJson, say } from '../output';

/** `reelflow retry <id> <step>`: resubmit a failed step now instead of after its backoff (the `retryStep` update). */
export function registerRetryCommand(program: Command): void {
  program
    .command('retry')
    .description('Resubmit a step that is backing off after a failed attempt now (exit 0 done, 2 refused with the reason, 4 unknown id)')
    .argument('<id>', 'pipeline/<name> or a bare name')
    .argument('<step>', 'the step id')
    .option('--json', 'print the pipeline\'s answer as JSON', false)
    .action(async (id: string, step: string, options: { json: boolean }) => {
      const env = cliEnv();
      await withTemporal(env, async ({ client }) => {
        const found = await findWorkflow(client, id);
        const answer = await sendOperatorUpdate(found, retryStepUpdate, { step });
        if (options.json) printJson({ workflowId: found.workflowId, ...answer });
        else say(`${found.workflowId}: ${answer.message}`);
      });
    });
}
