import { WorkflowNotFoundError, type Client, type WorkflowHandle } from '@temporalio/client';
import type { QueryDefinition } from '@temporalio/common';
import type { Command } from 'commander';
import { loadEnv, loadEnvWithService, type EnvNeeds, type ReelflowEnv, type ServiceSettings } from '../../config';
import type { UriRules } from '../../contract';
import { openMediaStore, type ConfiguredStore } from '../../media/store';
import { batchProgressQuery, pipelineProgressQuery } from '../../workflows/definitions';
import type { BatchProgress } from '../../workflows/batch-types';
import type { PipelineSummary } from '../../workflows/pipeline-types';
import { connectTemporal, type CliTemporal } from './connect';
import { CliError } from './errors';
import { EXIT } from './exit';
import { batchLines, pipelineLines } from './output';
import { sumBatchCredits } from '../../pipeline-spec/ui-text';

/** Reads the environment for a command; a bad value is a ConfigError, which the CLI reports as exit 2 naming the variable. */
export function cliEnv(needs: EnvNeeds = {}): ReelflowEnv {
  return loadEnv(needs);
}

/** Like cliEnv, with REELFLOW_SERVICE_URL and REELFLOW_API_KEY required. */
export function cliEnvWithService(): ReelflowEnv & { service: ServiceSettings } {
  return loadEnvWithService();
}

/** Pacing defaults every pipeline started here gets from the environment (the early status check). */
export function pacingFor(env: ReelflowEnv): { defaultPacing: { earlyCheckSeconds: number } } | Record<string, never> {
  return env.earlyStatusCheckSeconds !== undefined
    ? { defaultPacing: { earlyCheckSeconds: env.earlyStatusCheckSeconds } }
    : {};
}

/** URI rules for specs sent to the configured service: its own output URLs are valid inputs. */
export function uriRulesFor(env: ReelflowEnv): UriRules | undefined {
  return env.service ? { allowedOrigins: [env.service.url] } : undefined;
}

/** The media store the environment configures (REELFLOW_MEDIA_STORE; default the local stack's). */
export function cliMediaStore(env: ReelflowEnv): ConfiguredStore {
  return openMediaStore(env.media);
}

/** Runs `fn` with a Temporal client, closing the connection afterwards. */
export async function withTemporal<T>(env: ReelflowEnv, fn: (temporal: CliTemporal) => Promise<T>): Promise<T> {
  const temporal = await connectTemporal(env.temporal);
  try {
    return await fn(temporal);
  } finally {
    await temporal.close();
  }
}

/** A pipeline or batch workflow found by id. */
export type FoundWorkflow =
  | { kind: 'pipeline'; workflowId: string; handle: WorkflowHandle; status: string }
  | { kind: 'batch'; workflowId: string; handle: WorkflowHandle; status: string };

/**
 * Finds a workflow by id: `pipeline/<name>`, `batch/<name>`, or a bare name (tried as a pipeline,
 * then as a batch). None → CliError exit 4.
 */
export async function findWorkflow(client: Client, id: string): Promise<FoundWorkflow> {
  const candidates = id.includes('/') ? [id] : [`pipeline/${id}`, `batch/${id}`];
  for (const workflowId of candidates) {
    const handle = client.workflow.getHandle(workflowId);
    try {
      const description = await handle.describe();
      const type = description.type;
      const kind = type === 'batchWorkflow' ? 'batch' : type === 'pipelineWorkflow' ? 'pipeline' : null;
      if (!kind) throw new CliError(`${workflowId} is a ${type}, not a reelflow pipeline or batch`, EXIT.notFound);
      return { kind, workflowId, handle, status: description.status.name };
    } catch (error) {
      if (error instanceof WorkflowNotFoundError || (error as { name?: string }).name === 'WorkflowNotFoundError')
        continue;
      throw error;
    }
  }
  throw new CliError(
    `no pipeline or batch with id ${id} (tried ${candidates.join(', ')}); list them in the Temporal UI`,
    EXIT.notFound,
  );
}

/**
 * The pipeline's summary: its result when it completed, else the progress query (answered by a
 * worker, also for a closed workflow), else the summary carried in its failure.
 */
export function pipelineSummary(handle: WorkflowHandle): Promise<PipelineSummary> {
  return queryOrResult(handle, pipelineProgressQuery);
}

/**
 * The batch's progress (query, else its result); a partitioned batch's live counts are the sums of
 * its partitions' (each a batch workflow of its own).
 */
export async function batchProgress(handle: WorkflowHandle): Promise<BatchProgress> {
  const top = await queryOrResult(handle, batchProgressQuery);
  if (!top.partitions || top.status !== 'running') return top;
  const parts = await Promise.all(
    top.partitions.map((id) =>
      handle.client
        .getHandle(id)
        .query(batchProgressQuery)
        .catch(() => undefined),
    ),
  );
  const found = parts.filter((p): p is BatchProgress => p !== undefined);
  const sum = (key: 'completed' | 'failed' | 'cancelled' | 'skipped') => found.reduce((n, p) => n + p[key], 0);
  // A partition paused by an account-level refusal pauses the whole batch (one account).
  const paused = found.find((p) => p.paused)?.paused;
  return {
    ...top,
    ...(paused ? { status: 'paused' as const, paused } : {}),
    completed: sum('completed'),
    failed: sum('failed'),
    cancelled: sum('cancelled'),
    skipped: sum('skipped'),
    running: found.flatMap((p) => p.running),
    results: found.flatMap((p) => p.results),
    resultPages: found.flatMap((p) => p.resultPages ?? []),
    credits: sumBatchCredits(found),
    startedAt: Math.min(...found.map((p) => p.startedAt ?? Infinity)),
    updatedAt: Math.max(...found.map((p) => p.updatedAt ?? 0)),
  };
}

/** A progress query's answer, else the workflow's result; neither → CliError exit 3. */
async function queryOrResult<T>(handle: WorkflowHandle, query: QueryDefinition<T>): Promise<T> {
  try {
    return await handle.query(query);
  } catch (queryError) {
    try {
      return (await handle.result()) as T;
    } catch {
      throw new CliError(
        `cannot read the progress of ${handle.workflowId}: ${(queryError as Error).message} (is a reelflow worker running?)`,
        EXIT.unavailable,
      );
    }
  }
}

/**
 * Registers a command that acts on one pipeline or batch given by id (`reelflow status|cancel <id>`):
 * the `<id>` argument, the command's own options (`configure`) and `--json`, then `body` with the
 * workflow found (unknown id: exit 4).
 */
export function registerWorkflowCommand<O extends { json: boolean }>(
  program: Command,
  name: string,
  help: { description: string; json: string; configure?: (command: Command) => Command },
  body: (found: FoundWorkflow, options: O, env: ReelflowEnv) => Promise<void>,
): void {
  const command = program
    .command(name)
    .description(help.description)
    .argument('<id>', 'workflow id (pipeline/<name>, batch/<name>) or a bare pipeline/batch name');
  (help.configure ? help.configure(command) : command)
    .option('--json', help.json, false)
    .action(async (id: string, options: O) => {
      const env = cliEnv();
      await withTemporal(env, async ({ client }) => body(await findWorkflow(client, id), options, env));
    });
}

/** The progress of a found pipeline or batch, and its lines for a person. */
export async function progressOf(
  found: FoundWorkflow,
): Promise<{ progress: PipelineSummary | BatchProgress; lines: string[] }> {
  if (found.kind === 'pipeline') {
    const progress = await pipelineSummary(found.handle);
    return { progress, lines: pipelineLines(progress, found.workflowId) };
  }
  const progress = await batchProgress(found.handle);
  return { progress, lines: batchLines(progress, found.workflowId) };
}

/** Exit code for a finished pipeline or batch status. */
export function exitFor(status: string): number {
  return status === 'completed' ? EXIT.ok : EXIT.failed;
}
