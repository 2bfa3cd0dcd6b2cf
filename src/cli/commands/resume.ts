import type { Command } from 'commander';
import { pipelineWorkflowId, WORKFLOW_TYPES } from '../../workflows/definitions';
import type { PipelineWorkflowInput } from '../../workflows/pipeline-types';
import { cliEnv, exitFor, withTemporal } from '../lib/context';
import { CliError } from '../lib/errors';
import { EXIT } from '../lib/exit';
import { detachOrFollow } from '../lib/follow';
import { followFlags } from '../lib/options';
import { printJson, say } from '../lib/output';
import { earlierRun, resumeFromRun } from '../lib/resume';
import { resumedStartOptions } from '../lib/scheduling-options';

/**
 * `reelflow resume <pipeline> [--fresh]`: a new run of a failed or cancelled pipeline that takes the
 * outputs of the steps it completed (verified to still answer) and starts at the first step that did
 * not complete; nothing is paid twice. `--fresh` runs every step again (and pays again).
 */
export function registerResumeCommand(program: Command): void {
  const command = program
    .command('resume')
    .description(
      'Start a new run of a failed or cancelled pipeline from its first incomplete step, reusing (verified) outputs of completed steps (exit 0 completed, 1 failed/cancelled, 4 unknown id)',
    )
    .argument('<pipeline>', 'workflow id pipeline/<name> or the bare name')
    .option('--fresh', 'run every step again, paying again for steps that had completed', false);
  followFlags(command, 'the new run and print its ids').action(
    async (id: string, options: { fresh: boolean; detach: boolean; json: boolean }) => {
      const env = cliEnv();
      const workflowId = id.startsWith('pipeline/') ? id : pipelineWorkflowId(id);
      await withTemporal(env, async ({ client, settings }) => {
        let earlier;
        try {
          earlier = await earlierRun(client.workflow.getHandle(workflowId));
        } catch (error) {
          if ((error as { name?: string }).name === 'WorkflowNotFoundError')
            throw new CliError(`no pipeline ${workflowId}`, EXIT.notFound);
          throw error;
        }
        if (earlier.status === 'COMPLETED' && !options.fresh) {
          say(`${workflowId} completed; nothing to resume (use --fresh to run it again and pay again)`, options.json);
          if (options.json) printJson({ workflowId, runId: earlier.runId, resumed: false });
          return;
        }
        const { resume: _previous, ...base } = earlier.input;
        void _previous;
        const input: PipelineWorkflowInput = options.fresh
          ? base
          : { ...base, resume: await resumeFromRun(earlier, env.service?.url) };
        const carried = Object.keys(input.resume?.steps ?? {});
        const startedAt = Date.now();
        const handle = await client.workflow.start(WORKFLOW_TYPES.pipeline, {
          taskQueue: settings.taskQueue,
          workflowId,
          args: [input],
          ...resumedStartOptions(earlier.priority, input.spec),
        });
        const from = earlier.summary.steps.find((s) => !carried.includes(s.id))?.id ?? '(none)';
        say(
          options.fresh
            ? `started a fresh run of ${workflowId} (${handle.firstExecutionRunId}): every step runs and is paid again`
            : `resuming ${workflowId} from step ${from} in run ${handle.firstExecutionRunId}; carried from run ${earlier.runId}: ${carried.join(', ') || 'nothing'}`,
          options.json,
        );
        const summary = await detachOrFollow(handle, {
          ...options,
          startedAt,
          detachedIds: { resumedFrom: earlier.runId, carried },
        });
        if (!summary) return;
        if (options.json) printJson({ workflowId, runId: handle.firstExecutionRunId, ...summary });
        process.exitCode = exitFor(summary.status);
      });
    },
  );
}
