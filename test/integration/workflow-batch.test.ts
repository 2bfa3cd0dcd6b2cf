import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { startDevServer } from '../helpers/temporal';
import { LONG_FORM, PIXEL_PNG } from '../helpers/local-service';
import { pipeline, type PipelineSpec } from '../../src/spec';
import { SEARCH_ATTRIBUTE_KEYS, batchProgressQuery, batchWorkflowId } from '../../src/workflows/definitions';
import type { BatchProgress, BatchWorkflowInput } from '../../src/workflows/batch-types';
import { WorkflowFailedError } from '@temporalio/client';
import {
  bundleReelflowWorkflows,
  eventually,
  maybeRecordHistory,
  startHarness,
  startTestBridge,
  type Harness,
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
  input: BatchWorkflowInput,
  record: string,
): Promise<{ result: BatchProgress; maxRunning: number }> {
  const handle = await env.client.workflow.start('batchWorkflow', {
    taskQueue: TASK_QUEUE,
    workflowId: batchWorkflowId(input.name),
    args: [input],
  });
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
  await maybeRecordHistory(handle, record);
  return { result: value, maxRunning };
}

/** Most jobs in flight at once, from the service's own records: created (`submittedAt`) and not yet terminal (`completedAt`). */
function maxInFlight(jobs: { submittedAt: number; completedAt: number | null }[]): number {
  // At equal times the end counts first: a job that ended as another was created did not overlap it.
  const edges = jobs.flatMap((j) => [
    { at: j.submittedAt, delta: 1 },
    { at: j.completedAt ?? Infinity, delta: -1 },
  ]);
  edges.sort((a, b) => a.at - b.at || a.delta - b.delta);
  let now = 0;
  let max = 0;
  for (const edge of edges) max = Math.max(max, (now += edge.delta));
  return max;
}

describe('batch workflow', () => {
  it('runs a manifest with bounded concurrency across continue-as-new, then re-runs only the failed item', async () => {
    const manifest = [item('batch-a'), item('batch-b'), item('batch-c', 10), item('batch-d'), item('batch-e')];
    const submitsBefore = h.service.service.counters().submits;
    // Each render holds its job in flight for 3 s, so items started together overlap at the service (which runs 4 at once).
    h.service.service.setFaults({ modelDurationMs: 3_000 });
    const first = await runBatch(
      { name: 'nightly', items: manifest, concurrency: 2, itemsPerRun: 2 },
      'batch-first',
    ).finally(() => h.service.service.setFaults({ modelDurationMs: 0 }));
    expect(first.maxRunning).toBeGreaterThan(0);
    expect(first.maxRunning).toBeLessThanOrEqual(2);
    // The bound as the service saw it: never more than 2 of the batch's jobs in flight (created, not yet terminal).
    const batchJobs = h.service.service.jobs().filter((j) => /batch-[a-e]\/job\//.test(j.idempotencyKey ?? ''));
    expect(batchJobs).toHaveLength(4);
    expect(maxInFlight(batchJobs)).toBeLessThanOrEqual(2);
    expect(first.result.runs).toBe(3);
    expect(first.result).toMatchObject({
      total: 5,
      toRun: 5,
      completed: 4,
      failed: 1,
      cancelled: 0,
      status: 'completed',
    });
    const failed = first.result.results.find((r) => r.name === 'batch-c');
    expect(failed?.status).toBe('failed');
    expect(failed?.error).toMatch(/exceeds the remaining budget of 10/);
    expect(
      first.result.results
        .filter((r) => r.status === 'completed')
        .every((r) => r.finalOutputUrl?.startsWith(`${h.service.url}/files/`)),
    ).toBe(true);
    expect(h.service.service.counters().submits - submitsBefore).toBe(4);

    // Re-run after fixing the failed item's budget: only that item runs again.
    const fixed = manifest.map((spec) => (spec.name === 'batch-c' ? item('batch-c', 500) : spec));
    const rerunSubmitsBefore = h.service.service.counters().submits;
    const rerun = await runBatch(
      { name: 'nightly-rerun', items: fixed, concurrency: 2, rerunOf: first.result.results },
      'batch-rerun',
    );
    expect(rerun.result).toMatchObject({ total: 5, toRun: 1, completed: 5, failed: 0 });
    expect(h.service.service.counters().submits - rerunSubmitsBefore).toBe(1);
    const carried = rerun.result.results.filter((r) => r.name !== 'batch-c');
    expect(carried).toEqual(expect.arrayContaining(first.result.results.filter((r) => r.name !== 'batch-c')));
  });

  it('never has more than `concurrency` of its jobs in flight at the service (its own job records), within one run', async () => {
    // Six items in one run (no continue-as-new in between), two at a time; each render holds its job 3 s.
    h.service.service.setFaults({ modelDurationMs: 3_000 });
    const items = ['bound-1', 'bound-2', 'bound-3', 'bound-4', 'bound-5', 'bound-6'].map((name) => item(name));
    const run = await runBatch({ name: 'bounded', items, concurrency: 2 }, 'batch-bounded').finally(() =>
      h.service.service.setFaults({ modelDurationMs: 0 }),
    );
    expect(run.result).toMatchObject({ total: 6, completed: 6, failed: 0, runs: 1 });
    const jobs = h.service.service.jobs().filter((j) => /bound-\d\/job\//.test(j.idempotencyKey ?? ''));
    expect(jobs).toHaveLength(6);
    expect(jobs.every((j) => j.status === 'COMPLETED')).toBe(true);
    expect(maxInFlight(jobs)).toBeLessThanOrEqual(2);
  });

  it('cancelling a batch cancels the pipeline in flight (and its paid job) and starts no other', async () => {
    h.service.service.setFaults({ modelDurationMs: { [LONG_FORM]: 600_000 } });
    try {
      const input: BatchWorkflowInput = {
        name: 'cancel-me',
        items: [item('cb-1'), item('cb-2'), item('cb-3')],
        concurrency: 1,
      };
      const handle = await env.client.workflow.start('batchWorkflow', {
        taskQueue: TASK_QUEUE,
        workflowId: batchWorkflowId(input.name),
        args: [input],
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
      expect(progress.status).toBe('cancelled');
      expect(progress.results.map((r) => [r.name, r.status])).toEqual([
        ['cb-1', 'cancelled'],
        ['cb-2', 'skipped'],
        ['cb-3', 'skipped'],
      ]);
      expect(h.service.service.jobs().find((j) => j.id === job.id)?.status).toBe('CANCELLED');
      expect(h.service.service.jobs().filter((j) => /cb-[23]\/job/.test(j.idempotencyKey ?? ''))).toHaveLength(0);
    } finally {
      h.service.service.setFaults({ modelDurationMs: 0 });
    }
  });
});
