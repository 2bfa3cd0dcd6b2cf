import {
  WorkflowFailedError,
  type WorkflowHandle,
  type WorkflowHandleWithFirstExecutionRunId,
} from '@temporalio/client';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { batchProgressQuery, pipelineProgressQuery } from '../../workflows/definitions';
import type { BatchProgress } from '../../workflows/batch-types';
import type { PipelineSummary } from '../../workflows/pipeline-types';
import { CliError } from './errors';
import { EXIT } from './exit';
import { batchBar, pipelineLines, printJson, progressKey, say, waitingLines } from './output';

/** While nothing changes, how often a follower says what a waiting step is waiting for. */
const WAITING_NOTE_EVERY_MS = 15_000;
/** After a failed history read (a restarting frontend), how long to wait before the next. */
const RETRY_READ_MS = 1_000;
/**
 * The most often a follower asks for progress. A batch completes a workflow task for every few items;
 * a query per task made the CLI the batch's heaviest reader (each answer runs in the worker beside the
 * batch's own tasks), while a progress bar needs no more than a line a second.
 */
const MIN_READ_INTERVAL_MS = 1_000;

/**
 * Waits `ms`, or less once `signal` aborts: a follower's pause must not outlive the workflow, or the
 * process would wait out its timer (up to MIN_READ_INTERVAL_MS) before it exits.
 */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}

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
 * Yields once for every batch of history events that holds a completed workflow task and no close:
 * a workflow's state changes only when one of its tasks completes, so that is when progress is worth
 * asking for. The history is read by long poll (`waitNewEvent`): the server answers when events arrive,
 * so a follower of a job that renders for minutes sends no request in between. Follows continue-as-new
 * onto the next run; returns at the close.
 */
async function* stateChanges(handle: WorkflowHandle, signal: AbortSignal): AsyncGenerator<void> {
  const { client } = handle;
  let runId: string | undefined;
  let nextPageToken: Uint8Array | undefined;
  while (!signal.aborted) {
    let response;
    try {
      response = await client.withAbortSignal(signal, () =>
        client.workflowService.getWorkflowExecutionHistory({
          namespace: client.options.namespace,
          execution: { workflowId: handle.workflowId, runId },
          nextPageToken,
          waitNewEvent: true,
        }),
      );
    } catch {
      if (signal.aborted) return;
      await sleep(RETRY_READ_MS, signal);
      continue;
    }
    const events = response.history?.events ?? [];
    const continued = events.find((e) => e.workflowExecutionContinuedAsNewEventAttributes)
      ?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId;
    if (events.some(isClose)) return;
    if (events.some((e) => e.workflowTaskCompletedEventAttributes)) yield;
    if (continued) {
      runId = continued;
      nextPageToken = undefined;
    } else if (response.nextPageToken?.length) {
      nextPageToken = response.nextPageToken;
    } else {
      return;
    }
  }
}

type HistoryEvent = NonNullable<
  NonNullable<
    Awaited<ReturnType<WorkflowHandle['client']['workflowService']['getWorkflowExecutionHistory']>>['history']
  >['events']
>[number];

/** Whether an event closes the run (a continue-as-new closes it too, but the workflow goes on). */
const isClose = (e: HistoryEvent): boolean =>
  !!(
    e.workflowExecutionCompletedEventAttributes ||
    e.workflowExecutionFailedEventAttributes ||
    e.workflowExecutionCanceledEventAttributes ||
    e.workflowExecutionTerminatedEventAttributes ||
    e.workflowExecutionTimedOutEventAttributes
  );

/**
 * Follows a workflow to its end: reads its progress (`read`, a query) after a change of its state
 * (stateChanges), at most once every MIN_READ_INTERVAL_MS, and shows it; every WAITING_NOTE_EVERY_MS
 * without a change, shows the last progress again (the view says how long nothing changed). A `quiet`
 * follower shows nothing, so it reads nothing while the workflow runs. Nothing is read after the
 * close: the final view (finalView), when `isFinal` recognises it, is the last thing shown and
 * returned; else the last answer (a quiet follower asks once, then, for the closed workflow's view).
 */
async function followUntilEnd<T>(
  handle: WorkflowHandle,
  read: () => Promise<T>,
  show: (progress: T) => void,
  isFinal: (result: unknown) => boolean,
  quiet: boolean,
): Promise<T | undefined> {
  const end = outcome(handle);
  const stop = new AbortController();
  let last: T | undefined;
  let pending: Promise<{ value: T } | undefined> | undefined;
  const note = setInterval(() => last !== undefined && show(last), WAITING_NOTE_EVERY_MS);
  try {
    const changes = quiet ? undefined : stateChanges(handle, stop.signal);
    const ended = end.promise.then(() => 'ended' as const);
    let lastRead = 0;
    while (changes) {
      const next = await Promise.race([changes.next(), ended]);
      if (next === 'ended' || next.done) break;
      const early = lastRead + MIN_READ_INTERVAL_MS - Date.now();
      // Changes that come meanwhile wait in the history stream; the one read after the pause covers them.
      if (early > 0 && (await Promise.race([sleep(early, stop.signal), ended])) === 'ended') break;
      lastRead = Date.now();
      // A failed read (no worker has answered yet, or it is restarting): the next change asks again. A
      // read still out at the close is not waited for when the close carries the final view.
      pending = read().then(
        (value) => ({ value }),
        () => undefined,
      );
      const answer = await Promise.race([pending, ended]);
      if (answer === 'ended') break;
      pending = undefined;
      if (answer) {
        last = answer.value;
        show(last);
      }
    }
  } finally {
    clearInterval(note);
    stop.abort();
  }
  const result = finalView(await end.promise);
  if (isFinal(result)) {
    show(result as T);
    return result as T;
  }
  const late = await pending;
  if (late) {
    last = late.value;
    show(last);
  }
  if (quiet && last === undefined) return read().catch(() => undefined);
  return last;
}

/**
 * What a workflow ended with, as a view: its result, or for a workflow that failed or was cancelled
 * with its final summary as the failure's details (the pipeline does), that summary.
 */
function finalView(outcome: unknown): unknown {
  if (!(outcome instanceof WorkflowFailedError)) return outcome;
  const cause = outcome.cause;
  return cause instanceof ApplicationFailure || cause instanceof CancelledFailure ? cause.details?.[0] : undefined;
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
    options.quiet,
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
    options.quiet,
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
