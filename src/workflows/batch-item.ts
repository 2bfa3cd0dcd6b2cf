import {
  ApplicationFailure,
  CancellationScope,
  ChildWorkflowFailure,
  getExternalWorkflowHandle,
  isCancellation,
} from '@temporalio/workflow';
import { batchItemDoneSignal } from './definitions';
import type { BatchItemResult } from './batch-types';
import type { PipelineSummary } from './pipeline-types';

/** A finished item's result: its ledger and the last step's first output URL. */
export function itemResult(
  name: string,
  workflowId: string,
  status: BatchItemResult['status'],
  summary?: PipelineSummary,
  error?: string,
): BatchItemResult {
  const last = summary?.steps[summary.steps.length - 1];
  const output = last ? summary?.outputs[last.id] : undefined;
  const url = output && 'videos' in output ? output.videos[0]?.url : undefined;
  const archived = url ? last?.archived?.find((copy) => copy.url === url) : undefined;
  return {
    name,
    workflowId,
    status,
    ...(summary ? { ledger: summary.ledger } : {}),
    ...(url && status === 'completed' ? { finalOutputUrl: url } : {}),
    ...(archived && status === 'completed' ? { finalOutput: archived } : {}),
    ...(error ? { error } : {}),
  };
}

/** The result of an item whose pipeline threw `error`; its summary, else the one the failure carries. */
export function failedItemResult(
  name: string,
  workflowId: string,
  error: unknown,
  summary?: PipelineSummary,
): BatchItemResult {
  const cause = error instanceof ChildWorkflowFailure ? error.cause : error;
  const carried = cause instanceof ApplicationFailure ? (cause.details?.[0] as PipelineSummary | undefined) : undefined;
  const known = summary ?? (carried && Array.isArray(carried.steps) ? carried : undefined);
  if (isCancellation(cause) || isCancellation(error) || known?.status === 'cancelled')
    return itemResult(name, workflowId, 'cancelled', known);
  return itemResult(name, workflowId, 'failed', known, cause instanceof Error ? cause.message : String(cause));
}

/**
 * Runs a batch item's pipeline and tells its batch how it ended, by workflow id (the batch may have
 * continued as new), even when cancelled; a batch closed meanwhile is no error for the pipeline.
 */
export async function reportingToBatch(
  batchWorkflowId: string,
  name: string,
  workflowId: string,
  run: (observe: (summary: PipelineSummary) => void) => Promise<PipelineSummary>,
): Promise<PipelineSummary> {
  let summary: PipelineSummary | undefined;
  const report = (result: BatchItemResult) =>
    CancellationScope.nonCancellable(() =>
      getExternalWorkflowHandle(batchWorkflowId).signal(batchItemDoneSignal, result),
    ).catch(() => undefined);
  try {
    const done = await run((s) => (summary = s));
    await report(itemResult(name, workflowId, 'completed', done));
    return done;
  } catch (error) {
    await report(failedItemResult(name, workflowId, error, summary));
    throw error;
  }
}
