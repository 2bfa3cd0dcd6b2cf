import * as path from 'node:path';
import { InvalidArgumentError, type Command } from 'commander';
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import type { MediaStore } from '../../media/store';
import { safeNameSchema } from '../../pipeline-spec/spec';
import { batchWorkflowId, WORKFLOW_TYPES } from '../../workflows/definitions';
import type {
  BatchItemResult,
  BatchManifestItem,
  BatchProgress,
  BatchWorkflowInput,
} from '../../workflows/batch-types';
import type { PipelineSpec } from '../../pipeline-spec/spec';
import { putJsonLines } from '../../media/json-lines';
import { MEDIA_LIMITS } from '../../contract';
import type { MediaRef } from '../../media/reference';
import type { ResumeFrom } from '../../workflows/resume-types';
import { batchDetails, batchSummaryLine } from '../../pipeline-spec/ui-text';
import { resumeInputFor } from '../lib/resume';
import { registerBatchResumeCommand } from './batch-resume';
import {
  batchProgress,
  cliEnv,
  cliMediaStore,
  findWorkflow,
  pacingFor,
  uriRulesFor,
  withTemporal,
} from '../lib/context';
import { schedulingFlags, schedulingStartOptions } from '../lib/scheduling-options';
import { CliError } from '../lib/errors';
import { EXIT } from '../lib/exit';
import { followBatch } from '../lib/follow';
import { loadManifest } from '../lib/manifest';
import { batchManifestItems, batchResults } from '../lib/batch-store';
import { batchLines, printJson, say } from '../lib/output';

/** Items per page of a stored manifest (one activity reads one page). */
const MANIFEST_PAGE_SIZE = 100;

function positiveInt(text: string): number {
  const n = Number(text);
  if (!/^\d+$/.test(text) || n < 1 || n > 5000) throw new InvalidArgumentError('must be a whole number from 1 to 5000');
  return n;
}

function credits(text: string): number {
  const n = Number(text);
  if (!/^\d+$/.test(text) || n < 1) throw new InvalidArgumentError('must be a whole number of credits ≥ 1');
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
  return progress.status === 'completed' && progress.completed === progress.total ? EXIT.ok : EXIT.failed;
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

/** The items of an earlier batch that did not complete, from its stored manifest and result pages. */
async function itemsToRerun(
  client: Client,
  previousId: string,
  store: MediaStore,
  manifestFile: string | undefined,
  load: () => Promise<PipelineSpec[]>,
): Promise<{ specs: PipelineSpec[]; results: BatchItemResult[]; total: number; name: string }> {
  const previous = await findWorkflow(client, previousId.includes('/') ? previousId : `batch/${previousId}`);
  if (previous.kind !== 'batch') throw new CliError(`${previous.workflowId} is not a batch`, EXIT.usage);
  if (previous.status === 'RUNNING')
    throw new CliError(`${previous.workflowId} is still running; re-run its failures once it has finished`, EXIT.usage);
  const progress = await batchProgress(previous.handle);
  const results = await batchResults(progress, store);
  const completed = new Set(results.filter((r) => r.status === 'completed').map((r) => r.name));
  // A legacy batch kept no manifest: the one given on the command line stands in for it.
  let all: PipelineSpec[];
  if (progress.manifest) all = (await batchManifestItems(progress, store)).map((item) => item.spec);
  else if (manifestFile) all = await load();
  else
    throw new CliError(
      `${previous.workflowId} kept no manifest in the media store; give its manifest file with --rerun-failed`,
      EXIT.usage,
    );
  return {
    specs: all.filter((spec) => !completed.has(spec.name)),
    results: results.filter((r) => !completed.has(r.name)),
    total: all.length,
    name: previous.workflowId.replace(/^batch\//, ''),
  };
}

/** `reelflow batch <manifest>`: run many pipelines with a concurrency bound. */
export function registerBatchCommand(program: Command): void {
  const command = program
    .command('batch')
    .description(
      'Start a batch of pipelines from a manifest (CSV, JSON Lines or JSON; any number of rows: it is kept in the media store) and follow it with a progress bar. ' +
        'Columns/keys: spec (a spec file path), name (optional), and <step>.<field> overrides of step inputs (generate.prompt, revoice.audio_url; docs/batches.md). ' +
        'Exit 0 all completed, 1 any failed/cancelled, 2 bad rows (all listed; nothing started)',
    )
    .argument(
      '[manifest]',
      'manifest file (.csv, .jsonl or .json); paths inside are relative to it (optional with --rerun-failed)',
    )
    .option(
      '--concurrency <n>',
      'pipelines in flight at once (default: manifest value or 4; above 500 the batch is partitioned)',
      positiveInt,
    )
    .option('--name <name>', 'batch name; its workflow id is batch/<name> (default: manifest name or file name)')
    .option(
      '--budget <credits>',
      'stop starting items once spent plus in-flight credits would pass it (raise it with reelflow budget batch/<name> <credits>)',
      credits,
    )
    .option(
      '--rerun-failed <batch-id>',
      'run only the items of that earlier batch that did not complete (from its stored manifest and result pages), each from its first incomplete step (completed steps are not paid again)',
    )
    .option(
      '--fresh',
      'with --rerun-failed: run those items from their first step, paying again for steps that had completed',
      false,
    )
    .option('--detach', 'only start the batch and print its workflow id', false)
    .option('--json', 'print the final progress as JSON', false);
  schedulingFlags(command, 'batch').action(runBatch);
  registerBatchResumeCommand(command);
}

/** The options of `reelflow batch`. */
interface BatchOptions {
  concurrency?: number;
  priority?: number;
  fairnessKey?: string;
  fairnessWeight?: number;
  name?: string;
  budget?: number;
  rerunFailed?: string;
  fresh: boolean;
  detach: boolean;
  json: boolean;
}

/** What a batch runs: its items, its name and window, and the batch it re-runs (when it does). */
interface ChosenItems {
  items: BatchManifestItem[];
  name: string;
  concurrency: number | undefined;
  rerunOf?: string;
}

async function runBatch(manifestFile: string | undefined, options: BatchOptions): Promise<void> {
  if (!manifestFile && !options.rerunFailed)
    throw new CliError('give a manifest file (or --rerun-failed <batch-id>)', EXIT.usage);
  const env = cliEnv();
  const rules = uriRulesFor(env);
  const { store } = cliMediaStore(env);
  const stored = new Map<string, Promise<MediaRef>>();
  const load = async () => await loadManifest(manifestFile as string, rules, { store, stored });
  // A manifest is checked whole before Temporal is even reached: a bad row exits 2 whatever runs.
  const fresh = options.rerunFailed ? undefined : await load();
  await withTemporal(env, async ({ client, settings }) => {
    let chosen: ChosenItems | null;
    if (options.rerunFailed) {
      chosen = await rerunChoice(client, options.rerunFailed, options, env.service?.url, store, {
        manifestFile,
        load: async () => (await load()).items,
      });
    } else {
      const manifest = fresh ?? (await load());
      chosen = {
        name: batchName(options.name, manifest.name, manifestFile as string),
        concurrency: options.concurrency ?? manifest.concurrency,
        items: manifest.items.map((spec, index) => ({ index, spec })),
      };
    }
    if (!chosen) return;
    const { items, name, concurrency, rerunOf } = chosen;
    const workflowId = batchWorkflowId(name);
    // The manifest goes into the store as one object; the batch (and gc) refer to it by digest.
    const manifestObject = await putJsonLines(
      store,
      items,
      workflowId,
      MANIFEST_PAGE_SIZE,
      MEDIA_LIMITS.payloadBudgetBytes,
    );
    for (const ref of stored.values()) await store.addReferrer((await ref).$media.slice('sha256:'.length), workflowId);
    const input: BatchWorkflowInput = {
      name,
      manifest: manifestObject,
      ...(concurrency !== undefined ? { concurrency } : {}),
      ...(options.budget !== undefined ? { budgetCredits: options.budget } : {}),
      ...(rerunOf ? { rerunOf } : {}),
      ...(rules ? { uriRules: rules } : {}),
      ...pacingFor(env),
    };
    let handle;
    try {
      handle = await client.workflow.start(WORKFLOW_TYPES.batch, {
        taskQueue: settings.taskQueue,
        workflowId,
        args: [input],
        ...schedulingStartOptions(options),
        staticSummary: batchSummaryLine(name, items.length, concurrency ?? 4, rerunOf !== undefined),
        staticDetails: batchDetails(
          name,
          items.slice(0, 50).map((item) => item.spec),
          items.length,
        ),
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
    say(`started ${workflowId} (${items.length} pipelines, concurrency ${concurrency ?? 'default'})`, options.json);
    const progress = await followBatch(handle, { quiet: options.json });
    if (!progress) throw new CliError(`${workflowId} ended without progress`, EXIT.failed);
    const results = await batchResults(progress, store);
    if (options.json) printJson({ workflowId, ...progress, results });
    else say(batchLines({ ...progress, results }, workflowId).join('\n'));
    process.exitCode = batchExit(progress);
  });
}

/**
 * The items of an earlier batch to run again, each from its first incomplete step (unless `--fresh`);
 * null when every item completed (nothing to run).
 */
async function rerunChoice(
  client: Client,
  previousId: string,
  options: BatchOptions,
  serviceUrl: string | undefined,
  store: MediaStore,
  manifest: { manifestFile: string | undefined; load: () => Promise<PipelineSpec[]> },
): Promise<ChosenItems | null> {
  const rerun = await itemsToRerun(client, previousId, store, manifest.manifestFile, manifest.load);
  const rerunOf = `batch/${rerun.name}`;
  const name = batchName(options.name ?? `${rerun.name}-rerun`, undefined, rerun.name);
  const resumes = options.fresh ? {} : await resumesFor(client, rerun.results, serviceUrl);
  const items = rerun.specs.map((spec, index) => ({
    index,
    spec,
    ...(resumes[spec.name] ? { resume: resumes[spec.name] as ResumeFrom } : {}),
  }));
  const carried = Object.values(resumes).reduce((n, r) => n + Object.keys(r.steps).length, 0);
  say(
    `re-running ${items.length} of ${rerun.total} item(s) of ${rerunOf} that did not complete` +
      (options.fresh
        ? ' from their first step (--fresh: completed steps are paid again)'
        : `, each from its first incomplete step (${carried} completed step(s) carried, not paid again)`),
    options.json,
  );
  if (items.length === 0) {
    say(`nothing to re-run: every item of ${rerunOf} completed`, options.json);
    return null;
  }
  return { items, name, concurrency: options.concurrency, rerunOf };
}
