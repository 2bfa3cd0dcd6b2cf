import * as path from 'node:path';
import { InvalidArgumentError, type Command } from 'commander';
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { safeNameSchema } from '../../spec/spec';
import { batchWorkflowId, WORKFLOW_TYPES } from '../../workflows/definitions';
import type { BatchItemResult, BatchProgress, BatchWorkflowInput } from '../../workflows/batch-types';
import type { ResumeFrom } from '../../workflows/resume-types';
import { batchDetails, batchSummaryLine } from '../../workflows/ui-text';
import { resumeInputFor } from '../lib/resume';
import {
  batchProgress,
  cliEnv,
  cliMediaStore,
  findWorkflow,
  pacingFor,
  uriRulesFor,
  withTemporal,
} from '../lib/context';
import { CliError } from '../lib/errors';
import { EXIT } from '../lib/exit';
import { followBatch } from '../lib/follow';
import { loadManifest } from '../lib/manifest';
import { batchLines, printJson, say } from '../lib/output';

function positiveInt(text: string): number {
  const n = Number(text);
  if (!/^\d+$/.test(text) || n < 1 || n > 1000) throw new InvalidArgumentError('must be a whole number from 1 to 1000');
  return n;
}

function batchName(explicit: string | undefined, manifestName: string | undefined, file: string): string {
  const name = explicit ?? manifestName ?? path.basename(file).replace(/\.[^.]+$/, '');
  if (!safeNameSchema.safeParse(name).success) {
    throw new CliError(`batch name "${name}" must be 1-64 letters, digits, ".", "_" or "-" (set --name)`, EXIT.usage);
  }
  return name;
}

/** Exit code of a finished batch: 0 only when every item completed. */
export function batchExit(progress: BatchProgress): number {
  return progress.status === 'completed' && progress.results.every((r) => r.status === 'completed')
    ? EXIT.ok
    : EXIT.failed;
}

/**
 * Resume inputs for the items of an earlier batch that did not complete: each item's pipeline run
 * (closed) is read back and its completed steps carried, outputs verified. An item that never
 * started a pipeline has nothing to carry.
 */
async function resumesFor(
  client: Client,
  previous: BatchItemResult[],
  serviceUrl: string | undefined,
): Promise<Record<string, ResumeFrom>> {
  const resumes: Record<string, ResumeFrom> = {};
  for (const item of previous) {
    if (item.status === 'completed' || item.status === 'skipped') continue;
    try {
      resumes[item.name] = (await resumeInputFor(client, item.workflowId, serviceUrl)).resume;
    } catch (error) {
      if ((error as { name?: string }).name === 'WorkflowNotFoundError') continue;
      throw error;
    }
  }
  return resumes;
}

/** `reelflow batch <manifest>`: run many pipelines with a concurrency bound. */
export function registerBatchCommand(program: Command): void {
  program
    .command('batch')
    .description(
      'Start a batch of pipelines from a manifest and follow it with a progress bar. JSON manifest: {"name"?, "concurrency"?, "items": [spec path | inline spec]}; ' +
        'CSV manifest (.csv): header "spec,name" with one spec file path per row (name optional, overrides the spec name). Exit 0 all completed, 1 any failed/cancelled',
    )
    .argument('<manifest>', 'manifest file (.json or .csv); paths inside are relative to it')
    .option('--concurrency <n>', 'pipelines in flight at once (default: manifest value or 4)', positiveInt)
    .option('--name <name>', 'batch name; its workflow id is batch/<name> (default: manifest name or file name)')
    .option(
      '--rerun-failed <batch-id>',
      'resume only the items that did not complete in that earlier batch, each from its first incomplete step (completed steps are not paid again)',
    )
    .option(
      '--fresh',
      'with --rerun-failed: run those items from their first step, paying again for steps that had completed',
      false,
    )
    .option('--detach', 'only start the batch and print its workflow id', false)
    .option('--json', 'print the final progress as JSON', false)
    .action(
      async (
        manifestFile: string,
        options: {
          concurrency?: number;
          name?: string;
          rerunFailed?: string;
          fresh: boolean;
          detach: boolean;
          json: boolean;
        },
      ) => {
        const env = cliEnv();
        const rules = uriRulesFor(env);
        const manifest = await loadManifest(manifestFile, rules, { store: cliMediaStore(env).store });
        await withTemporal(env, async ({ client, settings }) => {
          let rerunOf: BatchWorkflowInput['rerunOf'];
          let resumes: BatchWorkflowInput['resumes'];
          let name = batchName(options.name, manifest.name, manifestFile);
          if (options.rerunFailed) {
            const previous = await findWorkflow(
              client,
              options.rerunFailed.includes('/') ? options.rerunFailed : `batch/${options.rerunFailed}`,
            );
            if (previous.kind !== 'batch') throw new CliError(`${previous.workflowId} is not a batch`, EXIT.usage);
            if (previous.status === 'RUNNING')
              throw new CliError(
                `${previous.workflowId} is still running; re-run its failures once it has finished`,
                EXIT.usage,
              );
            rerunOf = (await batchProgress(previous.handle)).results;
            if (!options.name) name = `${previous.workflowId.replace(/^batch\//, '')}-rerun`;
            const failed = rerunOf.filter((r) => r.status !== 'completed').length;
            if (!options.fresh) resumes = await resumesFor(client, rerunOf, env.service?.url);
            const carried = Object.values(resumes ?? {}).reduce((n, r) => n + Object.keys(r.steps).length, 0);
            say(
              `re-running ${failed} of ${rerunOf.length} item(s) of ${previous.workflowId} that did not complete` +
                (options.fresh
                  ? ' from their first step (--fresh: completed steps are paid again)'
                  : `, each from its first incomplete step (${carried} completed step(s) carried, not paid again)`),
              options.json,
            );
          }
          const workflowId = batchWorkflowId(name);
          const concurrency = options.concurrency ?? manifest.concurrency;
          const input: BatchWorkflowInput = {
            name,
            items: manifest.items,
            ...(concurrency !== undefined ? { concurrency } : {}),
            ...(rerunOf ? { rerunOf } : {}),
            ...(resumes ? { resumes } : {}),
            ...(rules ? { uriRules: rules } : {}),
            ...pacingFor(env),
          };
          let handle;
          try {
            handle = await client.workflow.start(WORKFLOW_TYPES.batch, {
              taskQueue: settings.taskQueue,
              workflowId,
              args: [input],
              staticSummary: batchSummaryLine(name, manifest.items.length, concurrency ?? 4, rerunOf !== undefined),
              staticDetails: batchDetails(name, manifest.items),
            });
          } catch (error) {
            if (error instanceof WorkflowExecutionAlreadyStartedError)
              throw new CliError(`a batch ${workflowId} is already running; pick another --name`, EXIT.usage);
            throw error;
          }
          if (options.detach) {
            if (options.json) printJson({ workflowId, runId: handle.firstExecutionRunId });
            else say(workflowId);
            return;
          }
          say(
            `started ${workflowId} (${manifest.items.length} pipelines, concurrency ${concurrency ?? 'default'})`,
            options.json,
          );
          const progress = await followBatch(handle, { quiet: options.json });
          if (!progress) throw new CliError(`${workflowId} ended without progress`, EXIT.failed);
          if (options.json) printJson({ workflowId, ...progress });
          else say(batchLines(progress, workflowId).join('\n'));
          process.exitCode = batchExit(progress);
        });
      },
    );
}
