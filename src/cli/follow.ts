import type { WorkflowHandle } from '@temporalio/client';
import { batchProgressQuery, pipelineProgressQuery } from '../workflows/definitions';
import type { BatchProgress } from '../workflows/batch-types';
import type { PipelineSummary } from '../workflows/pipeline-types';
import { batchBar, pipelineLines, progressKey, say, waitingLines } from './output';

/** How often a followed workflow is queried for progress. */
const FOLLOW_INTERVAL_MS = 1_000;
/** While nothing changes, how often a follower says what a waiting step is waiting for. */
const WAITING_NOTE_EVERY_MS = 15_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Settles with the workflow's outcome without throwing. */
function outcome(handle: WorkflowHandle): { done: () => boolean; promise: Promise<unknown> } {
  let settled = false;
  const promise = handle.result().then(
    (value) => {
      settled = true;
      return value;
    },
    (error: unknown) => {
      settled = true;
      return error;
    },
  );
  return { done: () => settled, promise };
}

/**
 * Follows a pipeline to its end, printing the steps whenever something changes (state, request id,
 * credits), with the elapsed time per step as seen from here. Returns the final summary.
 */
export async function followPipeline(handle: WorkflowHandle, options: { quiet: boolean; startedAt?: number }): Promise<PipelineSummary | undefined> {
  const startedAt = options.startedAt ?? Date.now();
  const stepStart: Record<string, number> = {};
  const stepElapsed: Record<string, number> = {};
  const end = outcome(handle);
  let lastKey = '';
  let lastPrinted = 0;
  let last: PipelineSummary | undefined;
  for (;;) {
    const finished = end.done();
    try {
      last = await handle.query(pipelineProgressQuery);
    } catch {
      // No worker has answered yet (or it is restarting): keep following.
    }
    if (last) {
      const now = Date.now();
      for (const step of last.steps) {
        if (step.status === 'running' && stepStart[step.id] === undefined) stepStart[step.id] = now;
        const begun = stepStart[step.id];
        if (begun !== undefined) stepElapsed[step.id] = step.status === 'running' ? now - begun : (stepElapsed[step.id] ?? now - begun);
      }
      const key = progressKey(last);
      if (key !== lastKey && !options.quiet) {
        lastKey = key;
        lastPrinted = now;
        say(pipelineLines(last, handle.workflowId, now - startedAt, stepElapsed, now).join('\n'));
      } else if (!options.quiet && now - lastPrinted >= WAITING_NOTE_EVERY_MS) {
        const lines = waitingLines(last, now);
        if (lines.length > 0) say(lines.join('\n'));
        lastPrinted = now;
      }
    }
    if (finished) break;
    await Promise.race([sleep(FOLLOW_INTERVAL_MS), end.promise]);
  }
  const result = await end.promise;
  if (result && typeof result === 'object' && 'steps' in result && 'ledger' in result) return result as PipelineSummary;
  return last;
}

/** Follows a batch to its end with a progress bar (one line per change). */
export async function followBatch(handle: WorkflowHandle, options: { quiet: boolean }): Promise<BatchProgress | undefined> {
  const end = outcome(handle);
  let lastLine = '';
  let last: BatchProgress | undefined;
  for (;;) {
    const finished = end.done();
    try {
      last = await handle.query(batchProgressQuery);
    } catch {
      // Not answered yet; keep following.
    }
    if (last && !options.quiet) {
      const line = batchBar(last);
      if (line !== lastLine) say(line);
      lastLine = line;
    }
    if (finished) break;
    await Promise.race([sleep(FOLLOW_INTERVAL_MS), end.promise]);
  }
  const result = await end.promise;
  if (result && typeof result === 'object' && 'results' in result && 'total' in result) return result as BatchProgress;
  return last;
}
