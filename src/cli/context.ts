import { WorkflowNotFoundError, type Client, type WorkflowHandle } from '@temporalio/client';
import { loadEnv, loadEnvWithService, type EnvNeeds, type ReelflowEnv, type ServiceSettings } from '../config';
import type { UriRules } from '../contract';
import { openMediaStore, type ConfiguredStore } from '../media/store';
import { batchProgressQuery, pipelineProgressQuery } from '../workflows/definitions';
import type { BatchProgress } from '../workflows/batch-types';
import type { PipelineSummary } from '../workflows/pipeline-types';
import { connectTemporal, type CliTemporal } from './connect';
import { CliError, EXIT } from './exit';

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
  return env.earlyStatusCheckSeconds !== undefined ? { defaultPacing: { earlyCheckSeconds: env.earlyStatusCheckSeconds } } : {};
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
      if (error instanceof WorkflowNotFoundError || (error as { name?: string }).name === 'WorkflowNotFoundError') continue;
      throw error;
    }
  }
  throw new CliError(`no pipeline or batch with id ${id} (tried ${candidates.join(', ')}); list them in the Temporal UI`, EXIT.notFound);
}

/**
 * The pipeline's summary: its result when it completed, else the progress query (answered by a
 * worker, also for a closed workflow), else the summary carried in its failure.
 */
export async function pipelineSummary(handle: WorkflowHandle): Promise<PipelineSummary> {
  try {
    return await handle.query(pipelineProgressQuery);
  } catch (queryError) {
    try {
      return (await handle.result()) as PipelineSummary;
    } catch {
      throw new CliError(`cannot read the progress of ${handle.workflowId}: ${(queryError as Error).message} (is a reelflow worker running?)`, EXIT.unavailable);
    }
  }
}

/** The batch's progress (query, else its result). */
export async function batchProgress(handle: WorkflowHandle): Promise<BatchProgress> {
  try {
    return await handle.query(batchProgressQuery);
  } catch (queryError) {
    try {
      return (await handle.result()) as BatchProgress;
    } catch {
      throw new CliError(`cannot read the progress of ${handle.workflowId}: ${(queryError as Error).message} (is a reelflow worker running?)`, EXIT.unavailable);
    }
  }
}

/** Exit code for a finished pipeline or batch status. */
export function exitFor(status: string): number {
  return status === 'completed' ? EXIT.ok : EXIT.failed;
}
