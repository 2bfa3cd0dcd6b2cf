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
import { batchCurrentDetails, sumBatchCredits } from '../spec/ui-text';

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

async function windowedBatch(input: BatchWorkflowInput, concurrency: number): Promise<BatchProgress> {
  const info = workflowInfo();
  const itemsPerRun = Math.max(1, input.itemsPerRun ?? DEFAULT_ITEMS_PER_RUN);
  const part = input.partition ?? { index: 0, count: 1 };
  const { manifest } = input;
  const total = remainingItems(part.index, manifest.records, part.count);
  const c: BatchCarried = input.carried
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
      };
  let status: BatchProgress['status'] = 'running';
  let pendingStarts = 0;
  let changes = 0;

  const inFlight = () => Object.keys(c.window).length;
  const progress = (): BatchProgress => ({
    name: input.name,
    total,
    toRun: total,
    ...c.counts,
    running: Object.keys(c.window),
    runs: c.runs,
    results: c.pendingResults,
    status,
    resultPages: c.resultPages,
    manifest: { sha256: manifest.sha256, records: manifest.records },
    concurrency,
    credits: c.credits,
    startedAt: c.startedAt,
    updatedAt: Date.now(),
    budgetCredits: c.budgetCredits,
    stoppedBy: c.stoppedBy,
    ...(input.rerunOf ? { rerunOf: input.rerunOf } : {}),
  });
  const show = () => setCurrentDetails(batchCurrentDetails(progress()));

  /** Counts an item's end once (its signal and, for a child of this run, its completion both say it). */
  const settle = (result: BatchItemResult): void => {
    if (!(result.name in c.window)) return;
    delete c.window[result.name];
    c.counts[result.status] += 1;
    for (const key of ['charged', 'refunded', 'net'] as const) c.credits[key] += result.ledger?.[key] ?? 0;
    c.pendingResults.push(result);
    changes += 1;
    show();
  };
  setHandler(batchItemDoneSignal, settle);
  setHandler(batchProgressQuery, progress);
  setHandler(
    raiseBatchBudgetUpdate,
    (credits) => {
      c.budgetCredits = credits;
      changes += 1;
      show();
      return { budgetCredits: credits };
    },
    {
      validator: (credits) => {
        if (!Number.isInteger(credits) || credits < 1) throw new Error('the budget must be a whole number ≥ 1');
        if (c.budgetCredits !== null && credits <= c.budgetCredits)
          throw new Error(`the budget is ${c.budgetCredits} credits; a new one must be larger`);
      },
    },
  );
  show();

  /** Spent plus what the items in flight are expected to cost (the mean of the finished ones) would pass the budget. */
  const overBudget = (): boolean => {
    if (c.budgetCredits === null) return false;
    const finished = c.counts.completed + c.counts.failed + c.counts.cancelled;
    const mean = finished > 0 ? c.credits.net / finished : 0;
    return c.credits.net + (inFlight() + 1) * mean > c.budgetCredits;
  };

  let page: { number: number; items: BatchManifestItem[] } | undefined;
  const itemAt = async (index: number): Promise<BatchManifestItem> => {
    const { page: number, offset } = manifestPageOf(manifest, index);
    if (page?.number !== number) page = { number, items: await store.readBatchPage(manifest, number) };
    const item = page.items[offset];
    if (!item || item.index !== index) throw new Error(`manifest page ${number} has no item ${index}`);
    return item;
  };

  const flush = async (): Promise<void> => {
    if (c.pendingResults.length === 0) return;
    // Results that arrive while the page is written stay pending for the next page.
    const results = c.pendingResults.slice();
    const sha256 = await store.writeBatchResults(info.workflowId, results);
    c.resultPages = [...c.resultPages, sha256];
    c.pendingResults = c.pendingResults.slice(results.length);
  };

  const startItem = async (item: BatchManifestItem): Promise<void> => {
    const { spec } = item;
    const workflowId = pipelineWorkflowId(spec.name);
    c.window[spec.name] = item.index;
    pendingStarts += 1;
    try {
      // Not in the batch's cancellation scope: a cancel reaches every item the same way, by id.
      const child = await CancellationScope.nonCancellable(() =>
        startChild(pipelineWorkflow, {
          workflowId,
          // Children outlive the run that started them (continue-as-new) and report by signal.
          parentClosePolicy: ParentClosePolicy.ABANDON,
          ...(input.publishSearchAttributes !== false
            ? { typedSearchAttributes: [{ key: SEARCH_ATTRIBUTES.batch, value: input.name }] }
            : {}),
          // Fields left undefined are not serialised: the input holds only what is set.
          args: [
            {
              spec,
              batch: { workflowId: info.workflowId },
              uriRules: input.uriRules,
              defaultPacing: input.defaultPacing,
              publishSearchAttributes: input.publishSearchAttributes,
              resume: item.resume,
            },
          ],
        }),
      );
      child.result().then(
        (summary) => settle(itemResult(spec.name, workflowId, 'completed', summary)),
        (error) => settle(failedItemResult(spec.name, workflowId, error)),
      );
    } catch (error) {
      // Not started (a pipeline of that name is running): the item failed, nothing was paid.
      settle(failedItemResult(spec.name, workflowId, error));
    } finally {
      pendingStarts -= 1;
    }
  };

  let startedThisRun = 0;
  const runIsFull = (): boolean => {
    const { historySize, continueAsNewSuggested } = workflowInfo();
    return startedThisRun >= itemsPerRun || continueAsNewSuggested || historySize > MAX_RUN_HISTORY_BYTES;
  };
  try {
    const records = manifest.records;
    while (c.nextIndex < records && (startedThisRun === 0 || !runIsFull()) && c.stoppedBy === null) {
      await condition(() => inFlight() < concurrency);
      if (overBudget()) {
        if (inFlight() === 0 && pendingStarts === 0) {
          c.stoppedBy = 'budget';
          break;
        }
        const seen = changes;
        await condition(() => changes !== seen);
        continue;
      }
      const item = await itemAt(c.nextIndex);
      c.nextIndex += part.count;
      startedThisRun += 1;
      void startItem(item);
      if (c.pendingResults.length >= RESULTS_PER_PAGE) await flush();
    }
    await condition(() => pendingStarts === 0);
    if (c.nextIndex < records && c.stoppedBy === null) {
      await flush();
      // Only counts, the window and result page digests go on; the next run starts on the current version
      // (docs/safe-deploys.md), so a long batch moves to a new release instead of keeping old workers.
      await makeContinueAsNewFunc<typeof batchWorkflow>({ initialVersioningBehavior: 'AUTO_UPGRADE' })({
        ...input,
        carried: c,
      });
    }
    await condition(() => inFlight() === 0);
  } catch (error) {
    if (!isCancellation(error)) throw error;
    await CancellationScope.nonCancellable(async () => {
      await condition(() => pendingStarts === 0);
      await Promise.all(
        Object.keys(c.window).map((name) =>
          getExternalWorkflowHandle(pipelineWorkflowId(name))
            .cancel()
            .catch((failure: unknown) => settle(failedItemResult(name, pipelineWorkflowId(name), failure))),
        ),
      );
      // Each cancelled pipeline cancels its paid job, then reports how it ended.
      await condition(() => inFlight() === 0);
      c.counts.skipped += remainingItems(c.nextIndex, manifest.records, part.count);
      c.nextIndex = manifest.records;
      status = 'cancelled';
      await flush();
      show();
    });
    throw new CancelledFailure('batch cancelled');
  }
  if (c.stoppedBy === 'budget') c.counts.skipped += remainingItems(c.nextIndex, manifest.records, part.count);
  await flush();
  status = 'completed';
  show();
  return progress();
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
