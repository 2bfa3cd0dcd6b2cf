import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import type { Command } from 'commander';
import { pipelineWorkflowId, WORKFLOW_TYPES } from '../../workflows/definitions';
import type { PipelineWorkflowInput } from '../../workflows/pipeline-types';
import { pipelineStartOptions, withoutInlineMedia } from '../../pipeline-spec/ui-text';
import { cliEnv, cliMediaStore, exitFor, pacingFor, uriRulesFor, withTemporal } from '../lib/context';
import { CliError } from '../lib/errors';
import { EXIT } from '../lib/exit';
import { detachOrFollow } from '../lib/follow';
import { followFlags } from '../lib/options';
import { schedulingFlags, schedulingStartOptions } from '../lib/scheduling-options';
import { printJson, say } from '../lib/output';
import { loadSpecFile } from '../lib/spec-files';

/** Hint printed under a failure a person can act on. */
export function hintFor(error: string | undefined): string | undefined {
  if (error && /insufficient[_ ]credits/i.test(error))
    return 'hint: the account has too few credits; top it up (local service: POST /v1/admin/credits with its --admin-key; `reelflow dev` keeps one in .reelflow/secrets/admin-key) and run again';
  return undefined;
}

/** `reelflow run <spec.json>`: start a pipeline and follow it to the end. */
export function registerRunCommand(program: Command): void {
  const command = program
    .command('run')
    .description(
      'Start a pipeline from a spec file and follow it to the end (exit 0 completed, 1 failed/cancelled, 2 invalid spec, 3 unreachable)',
    )
    .argument(
      '<spec>',
      'pipeline spec (JSON); local file paths in *_url(s) fields go into the media store (REELFLOW_MEDIA_STORE)',
    );
  schedulingFlags(followFlags(command, 'the pipeline and print its workflow id'), 'pipeline')
    .option(
      '--no-preflight',
      'do not check the inputs before paying (see docs/preflight.md); per step: "preflight": false',
    )
    .action(
      async (specFile: string, options: { detach: boolean; json: boolean; preflight: boolean; priority?: number }) => {
        const env = cliEnv();
        const rules = uriRulesFor(env);
        const spec = await loadSpecFile(specFile, rules, { store: cliMediaStore(env).store });
        await withTemporal(env, async ({ client, settings }) => {
          const workflowId = pipelineWorkflowId(spec.name);
          const input: PipelineWorkflowInput = {
            spec,
            ...(rules ? { uriRules: rules } : {}),
            ...pacingFor(env),
            ...(options.preflight ? {} : { preflight: false }),
          };
          const startedAt = Date.now();
          let handle;
          try {
            handle = await client.workflow.start(WORKFLOW_TYPES.pipeline, {
              taskQueue: settings.taskQueue,
              workflowId,
              args: [input],
              ...pipelineStartOptions(spec),
              ...schedulingStartOptions(options),
            });
          } catch (error) {
            if (error instanceof WorkflowExecutionAlreadyStartedError) {
              throw new CliError(
                `a pipeline named "${spec.name}" is already running (${workflowId}); follow it with \`reelflow status ${workflowId}\` or rename the spec`,
                EXIT.usage,
              );
            }
            throw error;
          }
          const followingNote = `started ${workflowId} on task queue ${settings.taskQueue} (Ctrl-C stops following; the pipeline keeps running)`;
          const summary = await detachOrFollow(handle, { ...options, startedAt, followingNote });
          if (!summary) return;
          if (options.json) printJson({ workflowId, ...withoutInlineMedia(summary) });
          else {
            const last = summary.steps.at(-1)?.output;
            const final = last && 'videos' in last ? last.videos[0]?.url : undefined;
            if (final) say(`output: ${final}`);
            const hint = hintFor([summary.error, ...summary.steps.map((step) => step.error)].filter(Boolean).join(' '));
            if (hint) say(hint);
          }
          process.exitCode = exitFor(summary.status);
        });
      },
    );
}
