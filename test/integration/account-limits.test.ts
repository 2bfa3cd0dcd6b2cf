import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { startDevServer } from '../helpers/temporal';
import { maxJobsInFlight } from '../helpers/jobs-in-flight';
import { LONG_FORM, PIXEL_PNG } from '../helpers/local-service';
import { pipeline, type PipelineSpec } from '../../src/pipeline-spec';
import { SEARCH_ATTRIBUTE_KEYS } from '../../src/workflows/definitions';
import type { BatchItemResult, BatchProgress } from '../../src/workflows/batch-types';
import { accountLimits } from '../../src/workers/worker';
import {
  bundleReelflowWorkflows,
  startHarness,
  startTestBatch,
  startTestBridge,
  testBatchResults,
  type Harness,
  type TestBatch,
  type TestBridge,
} from './workflow-harness';
import type { JobView } from '../../src/local-service';

/**
 * The account's cap on jobs in flight (REELFLOW_ACCOUNT_CONCURRENCY) and its shared 429 back-off, with
 * real parts: a Temporal dev server, the local service (stub renders), the bridge and a worker whose
 * permits live in a limits directory (test/unit/client/account-limits.test.ts shows two processes
 * sharing one).
 */
let bundle: WorkflowBundleWithSourceMap;
let env: TestWorkflowEnvironment;
let h: Harness;
let bridge: TestBridge;
let limitsDir: string;
const TASK_QUEUE = 'account-limits-test';
const CAP = 8;

beforeAll(async () => {
  limitsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelflow-account-limits-'));
  [bundle, env] = await Promise.all([
    bundleReelflowWorkflows(),
    startDevServer({ searchAttributes: SEARCH_ATTRIBUTE_KEYS }),
  ]);
  // The reaper's status calls go through the harness's client, built with these limits as its rate gate.
  const first = accountLimits({ dir: limitsDir, concurrency: CAP }, () => h.client);
  // The service runs many jobs at once: the only bound on jobs in flight is the account's cap.
  h = await startHarness(env, bundle, TASK_QUEUE, { render: 'stub', concurrencyPerModel: 64 }, { limits: first });
  bridge = await startTestBridge(h.service, env, TASK_QUEUE);
}, 120_000);

afterAll(async () => {
  await bridge?.stop();
  await h?.close();
  await env?.teardown();
  fs.rmSync(limitsDir, { recursive: true, force: true });
});

function item(name: string): PipelineSpec {
  return pipeline(name)
    .step('generate', LONG_FORM, { image_urls: [PIXEL_PNG] })
    .build();
}

function batch(name: string, size: number): TestBatch {
  return {
    name,
    specs: [...Array(size).keys()].map((n) => item(`${name}-${n}`)),
    concurrency: CAP,
    publishSearchAttributes: false,
  };
}

/** Runs the batches at once; every item's result, from the batches' result pages. */
async function runBatches(inputs: TestBatch[]): Promise<BatchItemResult[]> {
  const handles = await Promise.all(
    inputs.map((input) => startTestBatch(env.client, TASK_QUEUE, h.media.store, input)),
  );
  const progress = await Promise.all(handles.map((handle) => handle.result() as Promise<BatchProgress>));
  return (await Promise.all(progress.map((p) => testBatchResults(p, h.media.store)))).flat();
}

function jobsOf(prefixes: string[]): JobView[] {
  return h.service.service
    .jobs()
    .filter((j) => prefixes.some((prefix) => j.idempotencyKey?.startsWith(`reelflow:${prefix}-`)));
}

/** Every item completed once: one job per item, no Idempotency-Key twice, each ledger the service's charge. */
function expectExactlyOnce(items: BatchItemResult[], jobs: JobView[]): void {
  expect(items.every((r) => r.status === 'completed')).toBe(true);
  expect(jobs).toHaveLength(items.length);
  expect(new Set(jobs.map((j) => j.idempotencyKey)).size).toBe(jobs.length);
  expect(jobs.every((j) => j.status === 'COMPLETED')).toBe(true);
  for (const result of items) {
    const job = jobs.find((j) => j.idempotencyKey?.startsWith(`reelflow:${result.name}/job/`));
    expect(job).toBeDefined();
    expect(result.ledger).toEqual({ quoted: 0, charged: job?.creditsCharged, refunded: 0, net: job?.creditsCharged });
  }
}

describe('the account’s limits', () => {
  it(`three batches at once never have more than ${CAP} jobs in flight at the service, and every permit comes back`, async () => {
    // Each job stays in flight for 300 ms, so 3 × 8 pipelines would overlap far beyond the cap without it.
    h.service.service.setFaults({ modelDurationMs: 300 });
    const names = ['cap-a', 'cap-b', 'cap-c'];
    try {
      const results = await runBatches(names.map((name) => batch(name, 16)));
      expect(results).toHaveLength(48);
      const jobs = jobsOf(names);
      expectExactlyOnce(results, jobs);
      const most = maxJobsInFlight(jobs);
      expect(most).toBeLessThanOrEqual(CAP);
      // The cap was reached (the batches wanted 24 at once), so the test would see a broken cap.
      expect(most).toBe(CAP);
    } finally {
      h.service.service.setFaults({ modelDurationMs: 0 });
    }
    expect(fs.readdirSync(path.join(limitsDir, 'slots'))).toEqual([]);
  }, 180_000);

  it('with the service answering 429 to a share of submits, every item completes exactly once and the back-off is shared', async () => {
    const faultsBefore = h.service.service.injectedFaults().length;
    h.service.service.setFaults({
      modelDurationMs: 100,
      submitErrorRate: 0.25,
      submitErrorStatus: 429,
      submitRetryAfterSeconds: 1,
    });
    const names = ['busy-a', 'busy-b', 'busy-c'];
    try {
      const results = await runBatches(names.map((name) => batch(name, 8)));
      expect(results).toHaveLength(24);
      const jobs = jobsOf(names);
      expectExactlyOnce(results, jobs);
      expect(maxJobsInFlight(jobs)).toBeLessThanOrEqual(CAP);
    } finally {
      h.service.service.setFaults({ modelDurationMs: 0, submitErrorRate: 0 });
    }
    const refused = h.service.service
      .injectedFaults()
      .slice(faultsBefore)
      .filter((f) => f.kind === 'submit_error' && f.status === 429);
    // The fault fired (so the run proves something), and each refusal left the account's back-off behind.
    expect(refused.length).toBeGreaterThan(0);
    const until = Number(fs.readlinkSync(path.join(limitsDir, 'backoff', 'submit')));
    expect(until).toBeGreaterThanOrEqual(Math.max(...refused.map((f) => f.at)) + 1_000 - 50);
    expect(fs.readdirSync(path.join(limitsDir, 'slots'))).toEqual([]);
  }, 180_000);
});
