import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { startDevServer } from '../helpers/temporal';
import { maxJobsInFlight } from '../helpers/jobs-in-flight';
import { LONG_FORM, PIXEL_PNG } from '../helpers/local-service';
import { pipeline, type PipelineSpec } from '../../src/pipeline-spec';
import {
  SEARCH_ATTRIBUTE_KEYS,
  batchProgressQuery,
  batchWorkflowId,
  raiseBatchBudgetUpdate,
} from '../../src/workflows/definitions';
import type { BatchItemResult, BatchProgress } from '../../src/workflows/batch-types';
import { WorkflowFailedError, WorkflowUpdateFailedError } from '@temporalio/client';
import {
  bundleReelflowWorkflows,
  eventually,
  maybeRecordHistory,
  startHarness,
  startTestBatch,
  startTestBridge,
  testBatchResults,
  type Harness,
  type TestBatch,
  type TestBridge,
} from './workflow-harness';

let bundle: WorkflowBundleWithSourceMap;
let env: TestWorkflowEnvironment;
let h: Harness;
let bridge: TestBridge;
const TASK_QUEUE = 'workflow-batch-test';

beforeAll(async () => {
  [bundle, env] = await Promise.all([
    bundleReelflowWorkflows(),
    startDevServer({ searchAttributes: SEARCH_ATTRIBUTE_KEYS }),
  ]);
  h = await startHarness(env, bundle, TASK_QUEUE, { concurrencyPerModel: 4 });
  bridge = await startTestBridge(h.service, env, TASK_QUEUE);
}, 120_000);

afterAll(async () => {
  await bridge?.stop();
  await h?.close();
  await env?.teardown();
});

/** One-step pipelines; `budget` below the 80-credit quote makes an item fail before any spend. */
function item(name: string, budget?: number): PipelineSpec {
  const builder = pipeline(name).step('generate', LONG_FORM, { image_urls: [PIXEL_PNG] });
  return (budget === undefined ? builder : builder.budget(budget)).build();
}

async function runBatch(
  input: TestBatch,
  record: string | undefined,
  pageSize?: number,
): Promise<{ result: BatchProgress; maxRunning: number; results: BatchItemResult[] }> {
  const handle = await startTestBatch(env.client, TASK_QUEUE, h.media.store, input, pageSize);
  let maxRunning = 0;
  let done = false;
  const result = handle.result().finally(() => (done = true));
  // Sample the progress query while it runs: the bound must hold at every sample.
  while (!done) {
    const progress = await handle.query(batchProgressQuery).catch(() => undefined);
    if (progress) maxRunning = Math.max(maxRunning, progress.running.length);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const value = (await result) as BatchProgress;
  if (record) await maybeRecordHistory(handle, record);
  return { result: value, maxRunning, results: await testBatchResults(value, h.media.store) };
}

describe('batch workflow', () => {
  it('runs a stored manifest page by page with bounded concurrency across continue-as-new, then re-runs only the failed item', async () => {
    const manifest = [item('batch-a'), item('batch-b'), item('batch-c', 10), item('batch-d'), item('batch-e')];
    const submitsBefore = h.service.service.counters().submits;
    // Each render holds its job in flight for 3 s, so items started together overlap at the service (which runs 4 at once).
    h.service.service.setFaults({ modelDurationMs: 3_000 });
    // Two items a manifest page: three pages, read one at a time.
    const first = await runBatch(
      { name: 'nightly', specs: manifest, concurrency: 2, itemsPerRun: 2 },
      'batch-first',
      2,
    ).finally(() => h.service.service.setFaults({ modelDurationMs: 0 }));
    expect(first.maxRunning).toBeGreaterThan(0);
    expect(first.maxRunning).toBeLessThanOrEqual(2);
    // The bound as the service saw it: never more than 2 of the batch's jobs in flight (created, not yet terminal).
    const batchJobs = h.service.service.jobs().filter((j) => /batch-[a-e]\/job\//.test(j.idempotencyKey ?? ''));
    expect(batchJobs).toHaveLength(4);
    expect(maxJobsInFlight(batchJobs)).toBeLessThanOrEqual(2);
    expect(first.result.runs).toBe(3);
    expect(first.result).toMatchObject({
      total: 5,
      toRun: 5,
      completed: 4,
      failed: 1,
      cancelled: 0,
      status: 'completed',
      results: [],
    });
    // Results live in the store as JSON Lines pages (one per run here), each item once.
    expect(first.result.resultPages?.length).toBeGreaterThanOrEqual(2);
    expect(first.results.map((r) => r.name).sort()).toEqual(manifest.map((s) => s.name).sort());
    const failed = first.results.find((r) => r.name === 'batch-c');
    expect(failed?.status).toBe('failed');
    expect(failed?.error).toMatch(/exceeds the remaining budget of 10/);
    expect(
      first.results
        .filter((r) => r.status === 'completed')
        .every((r) => r.finalOutputUrl?.startsWith(`${h.service.url}/files/`)),
    ).toBe(true);
    expect(first.result.credits).toEqual({ charged: 320, refunded: 0, net: 320 });
    // The Temporal UI's current details say what `reelflow status` says: counts, rate, ETA, credits.
    const metadata = (await env.client.workflow
      .getHandle(batchWorkflowId('nightly'))
      .query('__temporal_workflow_metadata')) as { currentDetails?: string };
    expect(metadata.currentDetails).toContain('5/5 finished: completed 4 · failed 1 · cancelled 0');
    expect(metadata.currentDetails).toMatch(/rate [\d.]+ items\/s · ETA 0\.0 s/);
    expect(metadata.currentDetails).toContain('credits 320 net (320 charged, 0 refunded)');
    expect(h.service.service.counters().submits - submitsBefore).toBe(4);

    // Re-run what failed (as `reelflow batch --rerun-failed` does, from the result pages), its budget fixed.
    const again = first.results
      .filter((r) => r.status !== 'completed')
      .map((r) => (r.name === 'batch-c' ? item('batch-c', 500) : item(r.name)));
    const rerunSubmitsBefore = h.service.service.counters().submits;
    const rerun = await runBatch({ name: 'nightly-rerun', specs: again, concurrency: 2 }, 'batch-rerun');
    expect(rerun.result).toMatchObject({ total: 1, completed: 1, failed: 0 });
    expect(h.service.service.counters().submits - rerunSubmitsBefore).toBe(1);
  });

  it('never has more than `concurrency` of its jobs in flight at the service (its own job records), within one run', async () => {
    // Six items in one run (no continue-as-new in between), two at a time; each render holds its job 3 s.
    h.service.service.setFaults({ modelDurationMs: 3_000 });
    const items = ['bound-1', 'bound-2', 'bound-3', 'bound-4', 'bound-5', 'bound-6'].map((name) => item(name));
    const run = await runBatch({ name: 'bounded', specs: items, concurrency: 2 }, 'batch-bounded').finally(() =>
      h.service.service.setFaults({ modelDurationMs: 0 }),
    );
    expect(run.result).toMatchObject({ total: 6, completed: 6, failed: 0, runs: 1 });
    const jobs = h.service.service.jobs().filter((j) => /bound-\d\/job\//.test(j.idempotencyKey ?? ''));
    expect(jobs).toHaveLength(6);
    expect(jobs.every((j) => j.status === 'COMPLETED')).toBe(true);
    expect(maxJobsInFlight(jobs)).toBeLessThanOrEqual(2);
  });

  it('a window wider than one execution carries is split into partitions under the one batch id', async () => {
    // 501 in flight is over MAX_WINDOW_PER_RUN (500): two partitions, each every other item.
    const specs = ['part-a', 'part-b', 'part-c', 'part-d', 'part-e'].map((name) => item(name));
    // Not recorded: the replay test renames workflow ids, and a partition's id is derived from its parent's.
    const run = await runBatch({ name: 'wide', specs, concurrency: 501 }, undefined);
    expect(run.result).toMatchObject({
      status: 'completed',
      total: 5,
      completed: 5,
      partitions: ['batch/wide/part-0', 'batch/wide/part-1'],
    });
    expect(run.results.map((r) => r.name).sort()).toEqual(specs.map((s) => s.name));
    const parts = await Promise.all(
      ['batch/wide/part-0', 'batch/wide/part-1'].map(
        async (id) => (await env.client.workflow.getHandle(id).result()) as BatchProgress,
      ),
    );
    expect(parts.map((p) => [p.total, p.completed, p.concurrency])).toEqual([
      [3, 3, 251],
      [2, 2, 251],
    ]);
    // One fairness key for the whole batch, its id: not one per partition.
    const keys = await Promise.all(
      specs.map(async (s) => (await env.client.workflow.getHandle(`pipeline/${s.name}`).describe()).priority),
    );
    expect(keys.map((p) => p?.fairnessKey)).toEqual(Array(5).fill('batch/wide'));
  });

  it('stops starting items once spent plus the expected cost of those in flight would pass its budget', async () => {
    // One at a time, 80 credits each: after the first, 80 spent + 80 expected > 100.
    const specs = ['budget-1', 'budget-2', 'budget-3'].map((name) => item(name));
    const run = await runBatch({ name: 'budgeted', specs, concurrency: 1, budgetCredits: 100 }, 'batch-budget');
    expect(run.result).toMatchObject({
      status: 'completed',
      completed: 1,
      skipped: 2,
      stoppedBy: 'budget',
      budgetCredits: 100,
      credits: { net: 80 },
    });
    expect(h.service.service.jobs().filter((j) => /budget-[23]\/job/.test(j.idempotencyKey ?? ''))).toHaveLength(0);
  });

  it('a raised budget (the raiseBatchBudget update) lets a running batch go on; a lower one is refused', async () => {
    h.service.service.setFaults({ modelDurationMs: 3_000 });
    try {
      const specs = ['raise-1', 'raise-2', 'raise-3'].map((name) => item(name));
      const handle = await startTestBatch(env.client, TASK_QUEUE, h.media.store, {
        name: 'raised',
        specs,
        concurrency: 1,
        budgetCredits: 100,
      });
      await eventually(
        () => h.service.service.jobs().some((j) => j.idempotencyKey?.includes('raise-1/job/')),
        'the first item submitted',
      );
      const refused = await handle.executeUpdate(raiseBatchBudgetUpdate, { args: [50] }).then(
        () => null,
        (error: unknown) => error as WorkflowUpdateFailedError,
      );
      expect(refused?.cause?.message).toMatch(/the budget is 100 credits; a new one must be larger/);
      expect(await handle.executeUpdate(raiseBatchBudgetUpdate, { args: [1_000] })).toEqual({ budgetCredits: 1_000 });
      expect(await handle.result()).toMatchObject({ completed: 3, skipped: 0, stoppedBy: null, budgetCredits: 1_000 });
    } finally {
      h.service.service.setFaults({ modelDurationMs: 0 });
    }
  });

  it('cancelling a batch cancels the pipeline in flight (and its paid job) and starts no other', async () => {
    h.service.service.setFaults({ modelDurationMs: { [LONG_FORM]: 600_000 } });
    try {
      const handle = await startTestBatch(env.client, TASK_QUEUE, h.media.store, {
        name: 'cancel-me',
        specs: [item('cb-1'), item('cb-2'), item('cb-3')],
        concurrency: 1,
      });
      const job = await eventually(
        () =>
          h.service.service
            .jobs()
            .find((j) => j.idempotencyKey?.includes('cb-1/job/generate') && j.status === 'IN_PROGRESS'),
        'first job running',
      );
      await handle.cancel();
      const error = await handle.result().then(
        () => null,
        (e: unknown) => e,
      );
      expect((error as WorkflowFailedError).cause?.name).toBe('CancelledFailure');
      const progress = await handle.query(batchProgressQuery);
      await maybeRecordHistory(handle, 'batch-cancel');
      expect(progress).toMatchObject({ status: 'cancelled', cancelled: 1, skipped: 2, running: [] });
      expect((await testBatchResults(progress, h.media.store)).map((r) => [r.name, r.status])).toEqual([
        ['cb-1', 'cancelled'],
      ]);
      expect(h.service.service.jobs().find((j) => j.id === job.id)?.status).toBe('CANCELLED');
      expect(h.service.service.jobs().filter((j) => /cb-[23]\/job/.test(j.idempotencyKey ?? ''))).toHaveLength(0);
    } finally {
      h.service.service.setFaults({ modelDurationMs: 0 });
    }
  });
});
