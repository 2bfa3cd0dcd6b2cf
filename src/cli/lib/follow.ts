import type { WorkflowHandle, WorkflowHandleWithFirstExecutionRunId } from '@temporalio/client';
import { batchProgressQuery, pipelineProgressQuery } from '../../workflows/definitions';
import type { BatchProgress } from '../../workflows/batch-types';
import type { PipelineSummary } from '../../workflows/pipeline-types';
import { CliError } from './errors';
import { EXIT } from './exit';
import { batchBar, pipelineLines, printJson, progressKey, say, waitingLines } from './output';

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
 * Queries a workflow for progress every FOLLOW_INTERVAL_MS (and once more after it ended), showing
 * each answer, until it ends. Returns its result when `isFinal` recognises it, else the last answer.
 */
async function followUntilEnd<T>(
  handle: WorkflowHandle,
  read: () => Promise<T>,
  show: (progress: T) => void,
  isFinal: (result: unknown) => boolean,
): Promise<T | undefined> {
  const end = outcome(handle);
  let last: T | undefined;
  for (;;) {
    const finished = end.done();
    try {
      last = await read();
    } catch {
      // No worker has answered yet (or it is restarting): keep following.
    }
    if (last) show(last);
    if (finished) break;
    await Promise.race([sleep(FOLLOW_INTERVAL_MS), end.promise]);
  }
  const result = await end.promise;
  return isFinal(result) ? (result as T) : last;
}

const hasKeys = (value: unknown, ...keys: string[]) =>
  !!value && typeof value === 'object' && keys.every((key) => key in value);

/**
 * Follows a pipeline to its end, printing the steps whenever something changes (state, request id,
 * credits), with the elapsed time per step as seen from here. Returns the final summary.
 */
export async function followPipeline(
  handle: WorkflowHandle,
  options: { quiet: boolean; startedAt?: number },
): Promise<PipelineSummary | undefined> {
  const startedAt = options.startedAt ?? Date.now();
  const stepStart: Record<string, number> = {};
  const stepElapsed: Record<string, number> = {};
  let lastKey = '';
  let lastPrinted = 0;
  const show = (last: PipelineSummary): void => {
    const now = Date.now();
    for (const step of last.steps) {
      if (step.status === 'running' && stepStart[step.id] === undefined) stepStart[step.id] = now;
      const begun = stepStart[step.id];
      if (begun !== undefined)
        stepElapsed[step.id] = step.status === 'running' ? now - begun : (stepElapsed[step.id] ?? now - begun);
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
  };
  return followUntilEnd(
    handle,
    () => handle.query(pipelineProgressQuery),
    show,
    (result) => hasKeys(result, 'steps', 'ledger'),
  );
}

/** Follows a batch to its end with a progress bar (one line per change). */
export async function followBatch(
  handle: WorkflowHandle,
  options: { quiet: boolean },
): Promise<BatchProgress | undefined> {
  let lastLine = '';
  const show = (last: BatchProgress): void => {
    if (options.quiet) return;
    const line = batchBar(last);
    if (line !== lastLine) say(line);
    lastLine = line;
  };
  return followUntilEnd(
    handle,
    () => handle.query(batchProgressQuery),
    show,
    (result) => hasKeys(result, 'results', 'total'),
  );
}

/**
 * The end of `reelflow run` and `reelflow resume`: with --detach, print the ids (`detachedIds` beside
 * workflowId and runId) and return undefined; else say `followingNote` (if any) and follow the
 * pipeline to its summary (a run that ends without one is a failure, exit 1).
 */
export async function detachOrFollow(
  handle: WorkflowHandleWithFirstExecutionRunId,
  options: {
    detach: boolean;
    json: boolean;
    startedAt: number;
    followingNote?: string;
    detachedIds?: Record<string, unknown>;
  },
): Promise<PipelineSummary | undefined> {
  const { workflowId } = handle;
  if (options.detach) {
    if (options.json) printJson({ workflowId, runId: handle.firstExecutionRunId, ...options.detachedIds });
    else say(workflowId);
    return undefined;
  }
  if (options.followingNote) say(options.followingNote, options.json);
  const summary = await followPipeline(handle, { quiet: options.json, startedAt: options.startedAt });
  if (!summary) throw new CliError(`${workflowId} ended without a summary`, EXIT.failed);
  return summary;
}
