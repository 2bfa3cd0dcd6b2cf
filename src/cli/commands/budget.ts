import type { Command } from 'commander';
import { raiseBudgetUpdate } from '../../workflows/operator-updates';
import { CliError } from '../lib/errors';
import { EXIT } from '../lib/exit';
import { runOperatorUpdate } from '../lib/operator';

/** `reelflow budget <id> <credits>`: raise a running pipeline's budget (the `raiseBudget` update). */
export function registerBudgetCommand(program: Command): void {
  program
    .command('budget')
    .description(
      'Raise the credit budget of a running pipeline (exit 0 raised, 2 refused with the reason, 4 unknown id)',
    )
    .argument('<id>', 'pipeline/<name> or a bare name')
    .argument(
      '<credits>',
      'the new budget in credits: a whole number above the current budget and not below what is spent',
    )
    .option('--json', "print the pipeline's answer as JSON", false)
    .action(async (id: string, creditsText: string, options: { json: boolean }) => {
      // The validator decides; here only what cannot be a number is refused without asking it.
      const credits = Number(creditsText);
      if (!/^\d+$/.test(creditsText) || !Number.isSafeInteger(credits))
        throw new CliError(`credits: "${creditsText}" is not a whole number of credits`, EXIT.usage);
      await runOperatorUpdate(id, raiseBudgetUpdate, { credits }, options.json);
    });
}
