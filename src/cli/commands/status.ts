import type { Command } from 'commander';
import { progressOf, registerWorkflowCommand } from '../lib/context';
import { withoutInlineMedia } from '../../pipeline-spec/ui-text';
import { printJson, say } from '../lib/output';
import { fairnessKeyOf } from '../lib/fairness-key';
import { readSlotStatus, slotStatusLines } from '../lib/slot-status';

/** `reelflow status <id>`: progress or summary of a pipeline or a batch. */
export function registerStatusCommand(program: Command): void {
  const help = {
    description:
      "Show the progress or summary of a pipeline or batch, and the account's slots when capped or in use (exit 0 found, 4 unknown id, 3 unreachable)",
    json: 'print {kind, workflowId, temporalStatus, progress, slots?} as JSON (slots when capped or in use)',
  };
  registerWorkflowCommand(program, 'status', help, async (found, options) => {
    const { progress, lines } = await progressOf(found);
    // The account's slots, when capped or in use: this pipeline's or batch's share, under its fairness key.
    const slots = await readSlotStatus(await fairnessKeyOf(found));
    if (options.json) {
      // Inline media (a small data URI the user gave) is described, never printed.
      printJson({
        kind: found.kind,
        workflowId: found.workflowId,
        temporalStatus: found.status,
        progress: withoutInlineMedia(progress),
        ...(slots ? { slots } : {}),
      });
      return;
    }
    say([...lines, ...slotStatusLines(slots)].join('\n'));
  });
}
