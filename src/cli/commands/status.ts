import type { Command } from 'commander';
import { batchProgress, cliEnv, findWorkflow, pipelineSummary, withTemporal } from '../context';
import { withoutInlineMedia } from '../../workflows/ui-text';
import { batchLines, pipelineLines, printJson, say } from '../output';

/** `reelflow status <id>`: progress or summary of a pipeline or a batch. */
export function registerStatusCommand(program: Command): void {
  program
    .command('status')
    .description('Show the progress or summary of a pipeline or batch (exit 0 found, 4 unknown id, 3 unreachable)')
    .argument('<id>', 'workflow id (pipeline/<name>, batch/<name>) or a bare pipeline/batch name')
    .option('--json', 'print {kind, workflowId, temporalStatus, progress} as JSON', false)
    .action(async (id: string, options: { json: boolean }) => {
      const env = cliEnv();
      await withTemporal(env, async ({ client }) => {
        const found = await findWorkflow(client, id);
        const progress = found.kind === 'pipeline' ? await pipelineSummary(found.handle) : await batchProgress(found.handle);
        if (options.json) {
          // Inline media (a small data URI the user gave) is described, never printed.
          printJson({ kind: found.kind, workflowId: found.workflowId, temporalStatus: found.status, progress: withoutInlineMedia(progress) });
          return;
        }
        const lines = found.kind === 'pipeline' ? pipelineLines(progress as Awaited<ReturnType<typeof pipelineSummary>>, found.workflowId) : batchLines(progress as Awaited<ReturnType<typeof batchProgress>>, found.workflowId);
        say(lines.join('\n'));
      });
    });
}
