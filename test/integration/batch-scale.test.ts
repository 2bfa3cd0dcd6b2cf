import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { startDevServer } from '../helpers/temporal';
import { LONG_FORM, PIXEL_PNG, TEST_API_KEY } from '../helpers/local-service';
import { SEARCH_ATTRIBUTE_KEYS, batchWorkflowId } from '../../src/workflows/definitions';
import type { BatchItemResult, BatchProgress } from '../../src/workflows/batch-types';
import { jsonOf, runCli } from './cli-process';
import {
  bundleReelflowWorkflows,
  eventually,
  startHarness,
  startTestBridge,
  type Harness,
  type TestBridge,
} from './workflow-harness';

/**
 * A batch at the scale a user runs: 1,000 one-step pipelines from one CSV (one spec, a prompt column)
 * through the real CLI, on the local service's stub renderer (jobs take no render time), with the
 * webhook bridge; the service fails about 5 % of the jobs, and `--rerun-failed` runs those again. Checked against the service's own job records and the account's balance, and
 * every run of the batch's history. The figures (wall time, items/s) are printed, never asserted.
 */
const ITEMS = 1_000;
const TASK_QUEUE = 'batch-scale-test';

let bundle: WorkflowBundleWithSourceMap;
let env: TestWorkflowEnvironment;
let h: Harness;
let bridge: TestBridge;
let dir: string;
let cliEnv: Record<string, string>;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelflow-batch-scale-'));
  fs.writeFileSync(path.join(dir, 'hero.png'), Buffer.from(PIXEL_PNG.split(',')[1] ?? '', 'base64'));
  process.env.REELFLOW_MEDIA_STORE = `file://${path.join(dir, 'media')}`;
  [bundle, env] = await Promise.all([
    bundleReelflowWorkflows(),
    startDevServer({ searchAttributes: SEARCH_ATTRIBUTE_KEYS }),
  ]);
  h = await startHarness(env, bundle, TASK_QUEUE, {
    render: 'stub',
    stubFixturesDir: path.join(dir, 'stub-fixtures'),
    concurrencyPerModel: 64,
    credits: 10_000_000,
    // Quoting is not what this test is about: the account's quote limit is widened here.
    quoteLimits: { perMinute: 1_000_000, burst: 10_000 },
  });
  bridge = await startTestBridge(h.service, env, TASK_QUEUE);
  cliEnv = {
    TEMPORAL_ADDRESS: env.address,
    REELFLOW_TASK_QUEUE: TASK_QUEUE,
    REELFLOW_SERVICE_URL: h.service.url,
    REELFLOW_API_KEY: TEST_API_KEY,
    REELFLOW_MEDIA_STORE: process.env.REELFLOW_MEDIA_STORE as string,
  };
}, 180_000);

afterAll(async () => {
  await bridge?.stop();
  await h?.close();
  await env?.teardown();
  delete process.env.REELFLOW_MEDIA_STORE;
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

/** One spec, ITEMS rows each with its own name and prompt. */
function writeManifest(prefix: string): string {
  fs.writeFileSync(
    path.join(dir, 'one-step.json'),
    JSON.stringify({
      name: 'one-step',
      steps: [{ id: 'generate', model: LONG_FORM, input: { image_urls: ['hero.png'], duration: '4' } }],
    }),
  );
  const rows = Array.from({ length: ITEMS }, (_, i) => `one-step.json,${prefix}-${i},"shot ${i}, wide"`);
  const file = path.join(dir, `${prefix}.csv`);
  fs.writeFileSync(file, `spec,name,generate.prompt\n${rows.join('\n')}\n`);
  return file;
}

/** Events of every run of a workflow id (continue-as-new makes one run per `itemsPerRun` starts). */
async function historyLengths(workflowId: string): Promise<number[]> {
  const lengths: number[] = [];
  for await (const execution of env.client.workflow.list({ query: `WorkflowId = '${workflowId}'` })) {
    const history = await env.client.workflow.getHandle(workflowId, execution.runId).fetchHistory();
    lengths.push(history.events?.length ?? 0);
  }
  return lengths;
}

/** The item name in a job's Idempotency-Key (`reelflow:<item>/job/<step>:…`). */
const itemOf = (key: string | null) => /^reelflow:([^/]+)\/job\//.exec(key ?? '')?.[1] ?? key;

const jobsOf = (prefix: string) =>
  h.service.service.jobs().filter((j) => j.idempotencyKey?.startsWith(`reelflow:${prefix}-`) ?? false);

describe('a 1,000-item batch', () => {
  it('completes from a CSV on the stub renderer with about 5 % of jobs failed by the service: 1,000 jobs, no key twice, the ledger off by 0, every run under 10,000 events; --rerun-failed resubmits exactly the failed', async () => {
    const manifest = writeManifest('scale');
    const balanceBefore = h.service.service.balance();
    h.service.service.setFaults({ failureRate: 0.05 });
    const started = Date.now();
    let first;
    try {
      first = await runCli(['batch', manifest, '--name', 'scale', '--concurrency', '32', '--json'], cliEnv);
    } finally {
      h.service.service.setFaults({ failureRate: 0 });
    }
    const seconds = (Date.now() - started) / 1000;
    // Exit 1: some items failed (as injected); the batch itself ran to its end.
    expect({ code: first.code, stderr: first.stderr.slice(-2000) }).toEqual({ code: 1, stderr: expect.any(String) });
    const progress = jsonOf<BatchProgress & { results: BatchItemResult[] }>(first);
    const failed = progress.results.filter((r) => r.status === 'failed').map((r) => r.name);
    expect(progress).toMatchObject({ status: 'completed', total: ITEMS, failed: failed.length, cancelled: 0 });
    expect(progress.completed + failed.length).toBe(ITEMS);
    expect(progress.results).toHaveLength(ITEMS);
    expect(new Set(progress.results.map((r) => r.name)).size).toBe(ITEMS);
    // About 5 %: at least one, far from all.
    expect(failed.length).toBeGreaterThan(0);
    expect(failed.length).toBeLessThan(ITEMS / 4);

    // The service's own records: 1,000 jobs, no Idempotency-Key twice, the failed ones are the batch's failed items.
    const jobs = jobsOf('scale');
    expect(jobs).toHaveLength(ITEMS);
    expect(new Set(jobs.map((j) => j.idempotencyKey)).size).toBe(ITEMS);
    expect(
      jobs
        .filter((j) => j.status === 'FAILED')
        .map((j) => itemOf(j.idempotencyKey))
        .sort(),
    ).toEqual([...failed].sort());
    // The ledger: what the batch counted is what the account was charged (failed jobs refunded), to the credit.
    const spent = balanceBefore - h.service.service.balance();
    expect(progress.credits?.net).toBe(spent);
    expect(progress.results.reduce((n, r) => n + (r.ledger?.net ?? 0), 0)).toBe(spent);

    const lengths = await historyLengths(batchWorkflowId('scale'));
    expect(lengths.length).toBe(progress.runs);
    expect(Math.max(...lengths)).toBeLessThan(10_000);
    // Every item carries ReelflowBatch, so the UI lists the batch's items.
    await eventually(
      async () => (await env.client.workflow.count(`ReelflowBatch = 'scale'`)).count === ITEMS,
      'every item listed by ReelflowBatch',
    );

    const before = new Set(jobs.map((j) => j.id));
    const rerun = await runCli(['batch', '--rerun-failed', 'batch/scale', '--json'], cliEnv);
    expect({ code: rerun.code, stderr: rerun.stderr.slice(-2000) }).toEqual({ code: 0, stderr: expect.any(String) });
    expect(jsonOf<BatchProgress>(rerun)).toMatchObject({ total: failed.length, completed: failed.length });
    // Exactly the failed items were submitted again, once each.
    const resubmitted = jobsOf('scale').filter((j) => !before.has(j.id));
    expect(resubmitted.map((j) => itemOf(j.idempotencyKey)).sort()).toEqual([...failed].sort());
    // Figures, not thresholds.
    console.log(
      `batch-scale: ${ITEMS} items in ${seconds.toFixed(1)} s (${(ITEMS / seconds).toFixed(2)} items/s, CLI process included), ` +
        `${progress.runs} runs, largest run history ${Math.max(...lengths)} events; ${failed.length} failed by fault injection, ${resubmitted.length} resubmitted`,
    );
  }, 1_800_000);
});
