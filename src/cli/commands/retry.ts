import type { Command } from 'commander';
import { retryStepUpdate } from '../../workflows/definitions';
import { runOperatorUpdate } from '../lib/operator';

/** `reelflow retry <id> <step>`: resubmit a failed step now instead of after its backoff (the `retryStep` update). */
export function registerRetryCommand(program: Command): void {
  program
    .command('retry')
    .description(
      'Resubmit a step that is backing off after a failed attempt now (exit 0 done, 2 refused with the reason, 4 unknown id)',
    )
    .argument('<id>', 'pipeline/<name> or a bare name')
    .argument('<step>', 'the step id')
    .option('--json', "print the pipeline's answer as JSON", false)
    .action(async (id: string, step: string, options: { json: boolean }) => {
      await runOperatorUpdate(id, retryStepUpdate, { step }, options.json);
    });
}
