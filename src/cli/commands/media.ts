import { WorkflowNotFoundError } from '@temporalio/client';
import { InvalidArgumentError, type Command } from 'commander';
import { parseDurationSeconds } from '../../config';
import { collectGarbage, type ReferrerRunState } from '../../media/gc';
import { pipelineWorkflowId } from '../../workflows/definitions';
import { cliEnv, cliMediaStore, withTemporal } from '../lib/context';
import { printJson, say } from '../lib/output';
import { registerMediaCopyCommands } from './media-copy';

function duration(text: string): number {
  const seconds = parseDurationSeconds(text);
  if (seconds === null || seconds < 1) throw new InvalidArgumentError('must be a duration such as 30d, 12h or 90m');
  return seconds;
}

/** `reelflow media gc`: remove store objects no pipeline references any more (dry run by default). */
export function registerMediaCommand(program: Command): void {
  const media = program
    .command('media')
    .description('The media store (REELFLOW_MEDIA_STORE): inputs put there by run/batch, archived outputs');
  media
    .command('gc')
    .description(
      "Remove store objects that no pipeline or batch references any more: every referrer (a pipeline, or batch/<name> for a batch's manifest, result pages and inputs) closed (or unknown to Temporal) longer ago than --older-than, " +
        'and the object not stored or referenced within it. Dry run unless --apply (exit 0; 3 when Temporal is unreachable: nothing is removed blind)',
    )
    .requiredOption('--older-than <duration>', 'grace period after a pipeline closed, e.g. 30d, 12h', duration)
    .option('--apply', 'delete the objects (default: only list them)', false)
    .option('--json', 'print the report as JSON', false)
    .action(async (options: { olderThan: number; apply: boolean; json: boolean }) => {
      const env = cliEnv();
      const { store } = cliMediaStore(env);
      await withTemporal(env, async ({ client }) => {
        const runStateOf = async (pipeline: string): Promise<ReferrerRunState> => {
          try {
            // A batch refers to its manifest, its result pages and its inputs by its workflow id.
            const workflowId = pipeline.startsWith('batch/') ? pipeline : pipelineWorkflowId(pipeline);
            const description = await client.workflow.getHandle(workflowId).describe();
            if (description.status.name === 'RUNNING') return { state: 'running' };
            return { state: 'closed', closedAt: description.closeTime ?? new Date(0) };
          } catch (error) {
            if (error instanceof WorkflowNotFoundError || (error as { name?: string }).name === 'WorkflowNotFoundError')
              return { state: 'unknown' };
            throw error;
          }
        };
        const report = await collectGarbage({
          store,
          olderThanSeconds: options.olderThan,
          runStateOf,
          apply: options.apply,
        });
        if (options.json) {
          printJson({ store: store.location, ...report });
          return;
        }
        const verb = report.applied ? 'removed' : 'would remove';
        for (const object of report.removed)
          say(
            `${verb} sha256:${object.sha256} ${object.type} ${object.bytes} bytes (referrers: ${object.referrers.join(', ') || 'none'})`,
          );
        say(
          `${store.location}: ${report.examined} objects, ${report.kept} kept, ${verb} ${report.removed.length} (${report.bytesRemoved} bytes)${report.applied ? '' : '; dry run, --apply deletes'}`,
        );
      });
    });
  registerMediaCopyCommands(media);
}
