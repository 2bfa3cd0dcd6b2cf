import type { Command } from 'commander';
import { progressOf, registerWorkflowCommand } from '../context';
import { printJson, say } from '../output';

/** `reelflow cancel <id>`: request cancellation, wait for the workflow to close, print the report. */
export function registerCancelCommand(program: Command): void {
  const help = {
    description: 'Cancel a pipeline or batch, wait until it has closed, and print what each step ended as (exit 0 closed, 4 unknown id)',
    json: 'print the final report as JSON',
  };
  registerWorkflowCommand(program, 'cancel', help, async (found, options) => {
    if (found.status === 'RUNNING') {
      await found.handle.cancel();
      say(`cancellation requested for ${found.workflowId}; waiting for it to close`, options.json);
      // The workflow cancels its running service jobs (refunds) before it closes.
      await found.handle.result().catch(() => undefined);
    } else {
      say(`${found.workflowId} had already closed (${found.status.toLowerCase()})`, options.json);
    }
    const closed = await found.handle.describe();
    const { progress, lines } = await progressOf(found);
    if (options.json) {
      printJson({ kind: found.kind, workflowId: found.workflowId, temporalStatus: closed.status.name, progress });
      return;
    }
    say(lines.join('\n'));
  });
}
