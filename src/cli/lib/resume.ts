import type { Client, WorkflowHandle } from '@temporalio/client';
import { defaultPayloadConverter, type Priority } from '@temporalio/common';
import { safeFetch, SafeFetchError } from '../../net';
import type { PipelineSummary, PipelineWorkflowInput } from '../../workflows/pipeline-types';
import type { CarriedStep, ResumeFrom } from '../../workflows/resume-types';
import { pipelineSummary } from './context';
import { CliError } from './errors';
import { EXIT } from './exit';
import { isOpStepOutput } from '../../pipeline-spec/steps/op-types';

/** How long one output URL may take to answer the check. */
const VERIFY_TIMEOUT_MS = 30_000;

/** The earlier run of a pipeline, ready to resume. */
export interface EarlierRun {
  workflowId: string;
  runId: string;
  status: string;
  input: PipelineWorkflowInput;
  summary: PipelineSummary;
  /** The priority, fairness key and weight it ran with, when the server reports them. */
  priority?: Priority;
}

/** The input and summary of the latest run of `handle` (which must have closed). */
export async function earlierRun(handle: WorkflowHandle): Promise<EarlierRun> {
  const description = await handle.describe();
  if (description.status.name === 'RUNNING')
    throw new CliError(
      `${handle.workflowId} is still running; resume it once it has failed or been cancelled`,
      EXIT.usage,
    );
  const history = await handle.fetchHistory();
  const payload = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
  if (!payload) throw new CliError(`cannot read the input of ${handle.workflowId} from its history`, EXIT.failed);
  const input = defaultPayloadConverter.fromPayload<PipelineWorkflowInput>(payload);
  const summary = await pipelineSummary(handle);
  return {
    workflowId: handle.workflowId,
    runId: description.runId,
    status: description.status.name,
    input,
    summary,
    ...(description.priority ? { priority: description.priority } : {}),
  };
}

/**
 * Whether an output URL still answers: a 2xx, or a body larger than the one byte asked for (a
 * complete file is there). Through the address rules; the configured service's own origin may be
 * private (a local service). Returns null when it answers, else why not.
 */
export async function outputAnswers(url: string, serviceUrl: string | undefined): Promise<string | null> {
  const own = serviceUrl !== undefined && new URL(url).origin === new URL(serviceUrl).origin;
  try {
    await safeFetch(url, { allowPrivate: own, maxBytes: 1, timeoutMs: VERIFY_TIMEOUT_MS });
    return null;
  } catch (error) {
    if (error instanceof SafeFetchError) return error.code === 'too_large' ? null : error.message;
    return error instanceof Error ? error.message : String(error);
  }
}

/**
 * The `resume` input for a new run after `earlier`: every step that completed there (or was carried
 * there from a run before), outputs verified. A step whose output no longer answers cannot be
 * carried without paying for it again, so that is an error that names `--fresh`.
 */
export async function resumeFromRun(earlier: EarlierRun, serviceUrl: string | undefined): Promise<ResumeFrom> {
  const steps = carriedStepsOf(earlier);
  for (const [id, step] of Object.entries(steps)) {
    const outputs = step.output ? [step.output] : Object.values(step.items ?? {}).flatMap((item) => item.output ?? []);
    // An operation's output is in the media store, not served by the service: nothing to ask; carried as it is.
    for (const video of outputs.flatMap((output) =>
      isOpStepOutput(output) || !('videos' in output) ? [] : output.videos,
    )) {
      const problem = await outputAnswers(video.url, serviceUrl);
      if (problem) {
        throw new CliError(
          `the output of step ${id} (${video.url}) no longer answers (${problem}); resuming would pay for that step again. ` +
            'Run `reelflow resume <pipeline> --fresh` to pay for every step again.',
          EXIT.failed,
        );
      }
    }
  }
  return { workflowId: earlier.workflowId, runId: earlier.runId, ledger: earlier.summary.ledger, steps };
}

/**
 * The steps a resumed run carries from `earlier` (outputs not yet verified): version 1, every step up to
 * the first that did not complete; a graph (version 2), every completed step, and of a fan-out step
 * that did not complete, its completed items (so that no item is paid twice).
 */
export function carriedStepsOf(earlier: Pick<EarlierRun, 'runId' | 'input' | 'summary'>): Record<string, CarriedStep> {
  const steps: Record<string, CarriedStep> = {};
  const carriedBefore = earlier.input.resume?.steps ?? {};
  const graph = earlier.input.spec.version === 2;
  for (const step of earlier.summary.steps) {
    const output = earlier.summary.outputs[step.id] ?? step.output;
    const paid = { requestIds: step.requestIds, charged: step.charged, refunded: step.refunded };
    const items = Object.fromEntries(
      (step.items ?? []).flatMap((item) => {
        const before = carriedBefore[step.id]?.items?.[item.index];
        if (item.status !== 'completed' || !item.output) return [];
        const { requestIds, charged, refunded, output } = item;
        const carried = { requestIds, charged, refunded, output, paidInRunId: earlier.runId };
        return [[item.index, before ?? carried] as const];
      }),
    );
    if (graph && step.items && Object.keys(items).length > 0) {
      steps[step.id] = { ...paid, paidInRunId: earlier.runId, items };
      continue;
    }
    if (step.status !== 'completed' || !output) {
      if (graph) continue;
      break;
    }
    steps[step.id] = carriedBefore[step.id] ?? { output, ...paid, paidInRunId: earlier.runId };
  }
  return steps;
}

/** Looks up the closed pipeline `pipeline/<name>` and builds its resume input. */
export async function resumeInputFor(
  client: Client,
  workflowId: string,
  serviceUrl: string | undefined,
): Promise<{ earlier: EarlierRun; resume: ResumeFrom }> {
  const earlier = await earlierRun(client.workflow.getHandle(workflowId));
  return { earlier, resume: await resumeFromRun(earlier, serviceUrl) };
}
