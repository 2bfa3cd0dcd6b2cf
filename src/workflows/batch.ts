import {
  CancellationScope,
  CancelledFailure,
  condition,
  makeContinueAsNewFunc,
  executeChild,
  getExternalWorkflowHandle,
  isCancellation,
  ParentClosePolicy,
  setCurrentDetails,
  setHandler,
  startChild,
  workflowInfo,
} from '@temporalio/workflow';
import type { ReelflowActivities } from '../activities';
import { proxyReelflowActivities } from './activity-proxy';
import {
  batchItemDoneSignal,
  batchProgressQuery,
  pipelineWorkflowId,
  raiseBatchBudgetUpdate,
  SEARCH_ATTRIBUTES,
} from './definitions';
import { failedItemResult, itemResult } from './batch-item';
import { answerPauses, dropWaiting } from './batch-pause';
import { batchScheduling, itemPriority, type BatchScheduling } from './batch-priority';
import { pipelineWorkflow } from './pipeline';
import type {
  BatchCarried,
  BatchCounts,
  BatchItemResult,
  BatchManifestItem,
  BatchProgress,
  BatchWorkflowInput,
} from './batch-types';
import { manifestPageOf } from './batch-types';
import { batchCurrentDetails, sumBatchCredits } from '../pipeline-spec/ui-text';

const DEFAULT_CONCURRENCY = 4;

/** Items started per run before continue-as-new: about 8 events each keeps a run under ~5,000 events. */
export const DEFAULT_ITEMS_PER_RUN = 400;
/**
 * The largest window one batch execution keeps (a run's history is about 8 × (window + items per run)
 * events); a larger `concurrency` is split over partitions (docs/decisions/batches.md).
 */
export const MAX_WINDOW_PER_RUN = 500;
/**
 * A run whose history passes this many bytes continues as new whatever its count of starts: items with
 * large inline inputs fill a run's history (Temporal's limit is 50 MB) long before `itemsPerRun` starts.
 */
export const MAX_RUN_HISTORY_BYTES = 8 * 1024 * 1024;
/** Results kept in the workflow before they are written out as a result page. */
export const RESULTS_PER_PAGE = 500;

/** The store side of a paged batch: manifest pages in, result pages out. */
const store = proxyReelflowActivities<Pick<ReelflowActivities, 'readBatchPage' | 'writeBatchResults'>>({
  startToCloseTimeout: '2 minutes',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

/**
 * Runs the pipelines of a manifest kept in the media store (docs/batches.md): a sliding window of at
 * most `concurrency` child pipelines, each reporting its end by signal to `batch/<name>`, continuing
 * as new every `itemsPerRun` starts. Cancelling it cancels the items in flight and awaits their reports.
 */
export async function batchWorkflow(input: BatchWorkflowInput): Promise<BatchProgress> {
  const concurrency = Math.max(1, input.concurrency ?? DEFAULT_CONCURRENCY);
  if (!input.partition && concurrency > MAX_WINDOW_PER_RUN) return partitionedBatch(input, concurrency);
  return windowedBatch(input, concurrency);
}

/** One run of a windowed batch: what it carries to the next run (`c`), and what it counts while it runs. */
interface BatchRun {
  readonly input: BatchWorkflowInput;
  readonly workflowId: string;
  readonly concurrency: number;
  readonly part: { index: number; count: number };
  readonly total: number;
  readonly c: BatchCarried;
  /** The priority, fairness key and weight its items start with. */
  readonly scheduling: BatchScheduling;
  status: BatchProgress['status'];
  /** Children being started (a start is awaited outside the loop). */
  pendingStarts: number;
  /** Bumped on each settled item and budget change: what a stopped loop waits on. */
  changes: number;
  startedThisRun: number;
  /** The manifest page last read. */
  page?: { number: number; items: BatchManifestItem[] };
}

async function windowedBatch(input: BatchWorkflowInput, concurrency: number): Promise<BatchProgress> {
  const run = startRun(input, concurrency);
  setHandler(batchItemDoneSignal, (result) => settle(run, result));
  setHandler(batchProgressQuery, () => progressOf(run));
  setHandler(
    raiseBatchBudgetUpdate,
    (credits) => {
      run.c.budgetCredits = credits;
      run.changes += 1;
      show(run);
      return { budgetCredits: credits };
    },
    {
      validator: (credits) => {
        if (!Number.isInteger(credits) || credits < 1) throw new Error('the budget must be a whole number ≥ 1');
        if (run.c.budgetCredits !== null && credits <= run.c.budgetCredits)
          throw new Error(`the budget is ${run.c.budgetCredits} credits; a new one must be larger`);
      },
    },
  );
  answerPauses(run.c, () => {
    run.changes += 1;
    show(run);
  });
  show(run);

  try {
    await fillWindow(run);
  } catch (error) {
    if (!isCancellation(error)) throw error;
    await CancellationScope.nonCancellable(() => cancelItems(run));
    throw new CancelledFailure('batch cancelled');
  }
  const { c, part } = run;
  if (c.stoppedBy === 'budget') c.counts.skipped += remainingItems(c.nextIndex, input.manifest.records, part.count);
  await flush(run);
  run.status = 'completed';
  show(run);
  return progressOf(run);
}

/** This run's state: a fresh batch's, or what the previous run carried over. */
function startRun(input: BatchWorkflowInput, concurrency: number): BatchRun {
  const part = input.partition ?? { index: 0, count: 1 };
  return {
    input,
    workflowId: workflowInfo().workflowId,
    concurrency,
    part,
    total: remainingItems(part.index, input.manifest.records, part.count),
    c: input.carried
      ? { ...input.carried, runs: input.carried.runs + 1 }
      : {
          nextIndex: part.index,
          window: {},
          counts: { completed: 0, failed: 0, cancelled: 0, skipped: 0 },
          credits: { charged: 0, refunded: 0, net: 0 },
          pendingResults: [],
          resultPages: [],
          runs: 1,
          startedAt: Date.now(),
          budgetCredits: input.budgetCredits ?? null,
          stoppedBy: null,
        },
    scheduling: batchScheduling(input.partition !== undefined),
    status: 'running',
    pendingStarts: 0,
    changes: 0,
    startedThisRun: 0,
  };
}

const inFlight = (run: BatchRun) => Object.keys(run.c.window).length;

function progressOf({ input, c, total, status, concurrency }: BatchRun): BatchProgress {
  return {
    name: input.name,
    total,
    toRun: total,
    ...c.counts,
    running: Object.keys(c.window),
    runs: c.runs,
    results: c.pendingResults,
    status: c.pause && status === 'running' ? 'paused' : status,
    ...(c.pause ? { paused: c.pause } : {}),
    resultPages: c.resultPages,
    manifest: { sha256: input.manifest.sha256, records: input.manifest.records },
    concurrency,
    credits: c.credits,
    startedAt: c.startedAt,
    updatedAt: Date.now(),
    budgetCredits: c.budgetCredits,
    stoppedBy: c.stoppedBy,
    ...(input.rerunOf ? { rerunOf: input.rerunOf } : {}),
  };
}

const show = (run: BatchRun) => setCurrentDetails(batchCurrentDetails(progressOf(run)));

/** Counts an item's end once (its signal and, for a child of this run, its completion both say it). */
function settle(run: BatchRun, result: BatchItemResult): void {
  const { c } = run;
  if (!(result.name in c.window)) return;
  delete c.window[result.name];
  dropWaiting(c, result.name);
  c.counts[result.status] += 1;
  for (const key of ['charged', 'refunded', 'net'] as const) c.credits[key] += result.ledger?.[key] ?? 0;
  c.pendingResults.push(result);
  run.changes += 1;
  show(run);
}

/** Spent plus what the items in flight are expected to cost (the mean of the finished ones) would pass the budget. */
function overBudget(run: BatchRun): boolean {
  const { c } = run;
  if (c.budgetCredits === null) return false;
  const finished = c.counts.completed + c.counts.failed + c.counts.cancelled;
  const mean = finished > 0 ? c.credits.net / finished : 0;
  return c.credits.net + (inFlight(run) + 1) * mean > c.budgetCredits;
}

async function itemAt(run: BatchRun, index: number): Promise<BatchManifestItem> {
  const { manifest } = run.input;
  const { page: number, offset } = manifestPageOf(manifest, index);
  if (run.page?.number !== number) run.page = { number, items: await store.readBatchPage(manifest, number) };
  const item = run.page.items[offset];
  if (!item || item.index !== index) throw new Error(`manifest page ${number} has no item ${index}`);
  return item;
}

async function flush(run: BatchRun): Promise<void> {
  const { c } = run;
  if (c.pendingResults.length === 0) return;
  // Results that arrive while the page is written stay pending for the next page.
  const results = c.pendingResults.slice();
  const sha256 = await store.writeBatchResults(run.workflowId, results);
  c.resultPages = [...c.resultPages, sha256];
  c.pendingResults = c.pendingResults.slice(results.length);
}

async function startItem(run: BatchRun, item: BatchManifestItem): Promise<void> {
  const { input } = run;
  const { spec } = item;
  const workflowId = pipelineWorkflowId(spec.name);
  run.c.window[spec.name] = item.index;
  run.pendingStarts += 1;
  try {
    // Not in the batch's cancellation scope: a cancel reaches every item the same way, by id.
    const child = await CancellationScope.nonCancellable(() =>
      startChild(pipelineWorkflow, {
        workflowId,
        // Children outlive the run that started them (continue-as-new) and report by signal.
        parentClosePolicy: ParentClosePolicy.ABANDON,
        // The batch's --priority, else the spec's; the key of the batch the user started (a partition's parent).
        priority: itemPriority(spec, run.scheduling),
        ...(input.publishSearchAttributes !== false
          ? { typedSearchAttributes: [{ key: SEARCH_ATTRIBUTES.batch, value: input.name }] }
          : {}),
        // Fields left undefined are not serialised: the input holds only what is set.
        args: [
          {
            spec,
            batch: { workflowId: run.workflowId },
            uriRules: input.uriRules,
            defaultPacing: input.defaultPacing,
            publishSearchAttributes: input.publishSearchAttributes,
            resume: item.resume,
          },
        ],
      }),
    );
    child.result().then(
      (summary) => settle(run, itemResult(spec.name, workflowId, 'completed', summary)),
      (error) => settle(run, failedItemResult(spec.name, workflowId, error)),
    );
  } catch (error) {
    // Not started (a pipeline of that name is running): the item failed, nothing was paid.
    settle(run, failedItemResult(spec.name, workflowId, error));
  } finally {
    run.pendingStarts -= 1;
  }
}

function runIsFull(run: BatchRun): boolean {
  const itemsPerRun = Math.max(1, run.input.itemsPerRun ?? DEFAULT_ITEMS_PER_RUN);
  const { historySize, continueAsNewSuggested } = workflowInfo();
  return run.startedThisRun >= itemsPerRun || continueAsNewSuggested || historySize > MAX_RUN_HISTORY_BYTES;
}

/**
 * Starts items while the window has room (and the budget allows) until the manifest or this run is
 * done, continuing as new when the manifest is not; then waits for the window to empty.
 */
async function fillWindow(run: BatchRun): Promise<void> {
  const { c, input, part, concurrency } = run;
  const records = input.manifest.records;
  while (c.nextIndex < records && (run.startedThisRun === 0 || !runIsFull(run)) && c.stoppedBy === null) {
    // Paused by an account-level refusal: nothing starts until `reelflow batch resume`.
    await condition(() => inFlight(run) < concurrency && !c.pause);
    if (overBudget(run)) {
      if (inFlight(run) === 0 && run.pendingStarts === 0) {
        c.stoppedBy = 'budget';
        break;
      }
      const seen = run.changes;
      await condition(() => run.changes !== seen);
      continue;
    }
    const item = await itemAt(run, c.nextIndex);
    c.nextIndex += part.count;
    run.startedThisRun += 1;
    void startItem(run, item);
    if (c.pendingResults.length >= RESULTS_PER_PAGE) await flush(run);
  }
  await condition(() => run.pendingStarts === 0);
  if (c.nextIndex < records && c.stoppedBy === null) {
    await flush(run);
    // Only counts, the window and result page digests go on; the next run starts on the current version
    // (docs/safe-deploys.md), so a long batch moves to a new release instead of keeping old workers.
    await makeContinueAsNewFunc<typeof batchWorkflow>({ initialVersioningBehavior: 'AUTO_UPGRADE' })({
      ...input,
      carried: c,
    });
  }
  await condition(() => inFlight(run) === 0);
}

/** The batch was cancelled: cancels the items in flight, awaits their reports, skips the rest. */
async function cancelItems(run: BatchRun): Promise<void> {
  const { c, part } = run;
  await condition(() => run.pendingStarts === 0);
  await Promise.all(
    Object.keys(c.window).map((name) =>
      getExternalWorkflowHandle(pipelineWorkflowId(name))
        .cancel()
        .catch((failure: unknown) => settle(run, failedItemResult(name, pipelineWorkflowId(name), failure))),
    ),
  );
  // Each cancelled pipeline cancels its paid job, then reports how it ended.
  await condition(() => inFlight(run) === 0);
  c.counts.skipped += remainingItems(c.nextIndex, run.input.manifest.records, part.count);
  c.nextIndex = run.input.manifest.records;
  run.status = 'cancelled';
  await flush(run);
  show(run);
}

/** Items of a manifest of `records` a partition runs from `nextIndex` on, taking every `step`-th. */
function remainingItems(nextIndex: number, records: number, step: number): number {
  return nextIndex < records ? Math.floor((records - nextIndex - 1) / step) + 1 : 0;
}

/**
 * A window larger than one execution should carry: `count` partitions (`batch/<name>/part-<k>`), each
 * a windowed batch over every `count`-th item with its share of the window and budget; their results summed.
 */
async function partitionedBatch(input: BatchWorkflowInput, concurrency: number): Promise<BatchProgress> {
  const info = workflowInfo();
  const count = Math.ceil(concurrency / MAX_WINDOW_PER_RUN);
  const ids = Array.from({ length: count }, (_, k) => `${info.workflowId}/part-${k}`);
  const finished: BatchProgress[] = [];
  let status: BatchProgress['status'] = 'running';
  const sum = (): BatchProgress => {
    const add = (key: keyof BatchCounts) => finished.reduce((n, p) => n + p[key], 0);
    return {
      name: input.name,
      total: input.manifest.records,
      toRun: input.manifest.records,
      completed: add('completed'),
      failed: add('failed'),
      cancelled: add('cancelled'),
      skipped: add('skipped'),
      running: [],
      runs: 1,
      results: finished.flatMap((p) => p.results),
      status,
      resultPages: finished.flatMap((p) => p.resultPages ?? []),
      manifest: { sha256: input.manifest.sha256, records: input.manifest.records },
      concurrency,
      credits: sumBatchCredits(finished),
      updatedAt: Date.now(),
      partitions: ids,
      ...(input.rerunOf ? { rerunOf: input.rerunOf } : {}),
    };
  };
  setHandler(batchProgressQuery, sum);
  try {
    await Promise.all(
      ids.map(async (workflowId, index) => {
        const result = await executeChild(batchWorkflow, {
          workflowId,
          args: [
            {
              ...input,
              partition: { index, count },
              concurrency: Math.ceil(concurrency / count),
              ...(input.budgetCredits !== undefined ? { budgetCredits: Math.floor(input.budgetCredits / count) } : {}),
            },
          ],
        });
        finished.push(result);
      }),
    );
  } catch (error) {
    if (!isCancellation(error)) throw error;
    status = 'cancelled';
    throw new CancelledFailure('batch cancelled');
  }
  status = 'completed';
  return sum();
}
