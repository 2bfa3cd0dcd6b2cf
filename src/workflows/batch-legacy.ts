import {
  ApplicationFailure,
  CancellationScope,
  CancelledFailure,
  ChildWorkflowFailure,
  condition,
  continueAsNew,
  executeChild,
  isCancellation,
  setHandler,
} from '@temporalio/workflow';
import { FAILURE_TYPES } from '../contract/failure-types';
import type { PipelineSpec } from '../spec/spec';
import { batchProgressQuery, pipelineWorkflowId } from './definitions';
import { pipelineWorkflow } from './pipeline';
import type { PipelineSummary } from './pipeline-types';
import type { BatchItemResult, BatchProgress, LegacyBatchWorkflowInput } from './batch-types';

const DEFAULT_CONCURRENCY = 4;
const DEFAULT_ITEMS_PER_RUN = 100;

/** The item results a re-run starts from: completed items are kept, the rest run again. */
export function itemsToRerun(items: readonly PipelineSpec[], previous: readonly BatchItemResult[]): PipelineSpec[] {
  const done = new Set(previous.filter((r) => r.status === 'completed').map((r) => r.name));
  return items.filter((item) => !done.has(item.name));
}

/**
 * The batch of the previous version, for executions started on it (their input holds every spec):
 * runs many pipelines from a manifest with at most `concurrency` in flight, continuing as new
 * every `itemsPerRun` starts (state carried), with a progress query. In re-run mode (`rerunOf`)
 * only the items that did not complete before run again. Cancelling it cancels every pipeline
 * in flight (each cancels its paid job) and starts no other. Retire it once no such batch is open.
 */
export async function legacyBatchWorkflow(input: LegacyBatchWorkflowInput): Promise<BatchProgress> {
  const concurrency = Math.max(1, input.concurrency ?? DEFAULT_CONCURRENCY);
  const itemsPerRun = Math.max(1, input.itemsPerRun ?? DEFAULT_ITEMS_PER_RUN);
  const previous = new Map((input.rerunOf ?? []).map((r) => [r.name, r]));
  const results: BatchItemResult[] = input.carried?.results ?? [];
  let nextIndex = input.carried?.nextIndex ?? 0;
  const runs = (input.carried?.runs ?? 0) + 1;
  const running = new Set<string>();
  const toRun = input.rerunOf ? itemsToRerun(input.items, input.rerunOf).length : input.items.length;

  const progress = (status: BatchProgress['status']): BatchProgress => ({
    name: input.name,
    total: input.items.length,
    toRun,
    completed: results.filter((r) => r.status === 'completed').length,
    failed: results.filter((r) => r.status === 'failed').length,
    cancelled: results.filter((r) => r.status === 'cancelled').length,
    skipped: results.filter((r) => r.status === 'skipped').length,
    running: [...running],
    runs,
    results,
    status,
  });
  let status: BatchProgress['status'] = 'running';
  setHandler(batchProgressQuery, () => progress(status));

  const names = input.items.map((item) => item.name);
  const duplicate = names.find((name, i) => names.indexOf(name) !== i);
  if (duplicate !== undefined) {
    throw ApplicationFailure.create({
      type: FAILURE_TYPES.invalidBatch,
      nonRetryable: true,
      message: `items[${names.lastIndexOf(duplicate)}].name: duplicates "${duplicate}" (pipeline names are workflow ids)`,
    });
  }

  const runItem = async (spec: PipelineSpec): Promise<void> => {
    const workflowId = pipelineWorkflowId(spec.name);
    running.add(spec.name);
    try {
      const summary = await executeChild(pipelineWorkflow, {
        workflowId,
        parentClosePolicy: 'REQUEST_CANCEL',
        args: [
          {
            spec,
            ...(input.uriRules ? { uriRules: input.uriRules } : {}),
            ...(input.defaultPacing ? { defaultPacing: input.defaultPacing } : {}),
            ...(input.publishSearchAttributes !== undefined
              ? { publishSearchAttributes: input.publishSearchAttributes }
              : {}),
            ...(input.resumes?.[spec.name] ? { resume: input.resumes[spec.name] } : {}),
          },
        ],
      });
      results.push(itemResult(spec.name, workflowId, 'completed', summary));
    } catch (error) {
      const cause = error instanceof ChildWorkflowFailure ? error.cause : error;
      if (isCancellation(cause) || isCancellation(error)) {
        results.push({ name: spec.name, workflowId, status: 'cancelled' });
      } else {
        const summary =
          cause instanceof ApplicationFailure ? (cause.details?.[0] as PipelineSummary | undefined) : undefined;
        results.push(
          itemResult(spec.name, workflowId, 'failed', summary, cause instanceof Error ? cause.message : String(cause)),
        );
      }
    } finally {
      running.delete(spec.name);
    }
  };

  const inFlight = new Set<Promise<void>>();
  let startedThisRun = 0;
  try {
    while (nextIndex < input.items.length && startedThisRun < itemsPerRun) {
      const spec = input.items[nextIndex] as PipelineSpec;
      const before = previous.get(spec.name);
      if (before && before.status === 'completed') {
        results.push(before);
        nextIndex += 1;
        continue;
      }
      await condition(() => inFlight.size < concurrency);
      nextIndex += 1;
      startedThisRun += 1;
      const promise: Promise<void> = runItem(spec).finally(() => inFlight.delete(promise));
      inFlight.add(promise);
    }
    await condition(() => inFlight.size === 0);
  } catch (error) {
    if (!isCancellation(error)) throw error;
    // Cancellation reached every child pipeline; wait until each reports how its job ended.
    await CancellationScope.nonCancellable(() => condition(() => inFlight.size === 0));
    for (const spec of input.items.slice(nextIndex))
      results.push({ name: spec.name, workflowId: pipelineWorkflowId(spec.name), status: 'skipped' });
    nextIndex = input.items.length;
    status = 'cancelled';
    throw new CancelledFailure('batch cancelled');
  }

  if (nextIndex < input.items.length) {
    // Keep each run's history small: carry the results and continue where this run stopped.
    await continueAsNew<(input: LegacyBatchWorkflowInput) => Promise<BatchProgress>>({
      ...input,
      carried: { nextIndex, results, runs },
    });
  }
  status = 'completed';
  return progress(status);
}

function itemResult(
  name: string,
  workflowId: string,
  status: 'completed' | 'failed',
  summary?: PipelineSummary,
  error?: string,
): BatchItemResult {
  const last = summary?.steps[summary.steps.length - 1];
  const url = last ? summary?.outputs[last.id]?.videos[0]?.url : undefined;
  return {
    name,
    workflowId,
    status,
    ...(summary ? { ledger: summary.ledger } : {}),
    ...(url ? { finalOutputUrl: url } : {}),
    ...(error ? { error } : {}),
  };
}
