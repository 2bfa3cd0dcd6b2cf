import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { startDevServer } from '../helpers/temporal';
import { maxJobsInFlight } from '../helpers/jobs-in-flight';
import { testRouteStore } from '../helpers/route-store';
import { LONG_FORM, PIXEL_PNG } from '../helpers/local-service';
import { from, pipeline, type PipelineSpec } from '../../src/pipeline-spec';
import { pipelineWorkflowId, SEARCH_ATTRIBUTE_KEYS } from '../../src/workflows/definitions';
import type { BatchItemResult, BatchProgress } from '../../src/workflows/batch-types';
import type { PipelineSummary } from '../../src/workflows/pipeline-types';
import type { SlotCaps, SlotLogEntry, SlotStore } from '../../src/routing/slot-store';
import { accountLimits } from '../../src/workers/worker';
import { AccountSlots } from '../../src/routing/account-slots';
import { temporalSlotSignaller } from '../../src/routing/slot-signaller';
import {
  bundleReelflowWorkflows,
  eventually,
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
 * The account's slots in the route store (REELFLOW_ACCOUNT_CONCURRENCY, REELFLOW_MODEL_CONCURRENCY)
 * and its shared 429 back-off, with real parts: a Temporal dev server, the local service (stub
 * renders), the bridge and a worker. Caps are read from the service's own records; priority and fair
 * share from the slot log (test/unit/routing/slot-programs.test.ts checks the grant order on both stores).
 */
let bundle: WorkflowBundleWithSourceMap;
let env: TestWorkflowEnvironment;
let h: Harness;
let bridge: TestBridge;
let limitsDir: string;
let slots: SlotStore;
const TASK_QUEUE = 'account-slots-test';
const UPSCALE = 'service-upscale-video-fast';
/** Both binding: the two models could hold 4 at once, the account 3 (the test reads each cap reached). */
const caps: SlotCaps = { account: 3, models: { [LONG_FORM]: 2, [UPSCALE]: 2 } };

beforeAll(async () => {
  limitsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelflow-account-limits-'));
  [bundle, env] = await Promise.all([
    bundleReelflowWorkflows(),
    startDevServer({ searchAttributes: SEARCH_ATTRIBUTE_KEYS }),
  ]);
  const backoff = accountLimits({ dir: limitsDir, models: {} }, () => h.client);
  // The service runs many jobs at once: the only bound on jobs in flight is the slots.
  h = await startHarness(
    env,
    bundle,
    TASK_QUEUE,
    { render: 'stub', concurrencyPerModel: 64 },
    // The local service honours Idempotency-Key: a queued job's submit waits beside its place (submitted by whoever frees a slot).
    { limits: backoff, slotCaps: caps, idempotency: 'honoured' },
  );
  slots = testRouteStore(TASK_QUEUE).slots;
  bridge = await startTestBridge(h.service, env, TASK_QUEUE, { slotCaps: caps });
}, 120_000);

afterAll(async () => {
  await bridge?.stop();
  await h?.close();
  await env?.teardown();
  fs.rmSync(limitsDir, { recursive: true, force: true });
});

function twoSteps(name: string): PipelineSpec {
  return pipeline(name)
    .step('generate', LONG_FORM, { image_urls: [PIXEL_PNG] })
    .step('upscale', UPSCALE, { video_url: from('generate') })
    .build();
}

function oneStep(name: string): PipelineSpec {
  return pipeline(name)
    .step('generate', LONG_FORM, { image_urls: [PIXEL_PNG] })
    .build();
}

function batch(name: string, size: number, item = oneStep, extra: Partial<TestBatch> = {}): TestBatch {
  return {
    name,
    specs: [...Array(size).keys()].map((n) => item(`${name}-${n}`)),
    concurrency: size,
    publishSearchAttributes: false,
    ...extra,
  };
}

/** Runs the batches at once; every item's result, from the batches' result pages. */
async function runBatches(inputs: TestBatch[], meanwhile?: () => Promise<unknown>): Promise<BatchItemResult[]> {
  const handles = await Promise.all(
    inputs.map((input) => startTestBatch(env.client, TASK_QUEUE, h.media.store, input)),
  );
  await meanwhile?.();
  const progress = await Promise.all(handles.map((handle) => handle.result() as Promise<BatchProgress>));
  return (await Promise.all(progress.map((p) => testBatchResults(p, h.media.store)))).flat();
}

/** The jobs of the lone pipeline `name`. */
function pipelineJobs(name: string): JobView[] {
  return h.service.service.jobs().filter((j) => j.idempotencyKey?.startsWith(`reelflow:${name}/`));
}

function jobsOf(prefixes: string[]): JobView[] {
  return h.service.service
    .jobs()
    .filter((j) => prefixes.some((prefix) => j.idempotencyKey?.startsWith(`reelflow:${prefix}-`)));
}

async function lastSeq(): Promise<number> {
  let seq = 0;
  for (;;) {
    const page = await slots.log(seq, 1_000);
    if (page.length === 0) return seq;
    seq = page[page.length - 1]!.seq;
  }
}

async function logAfter(seq: number): Promise<SlotLogEntry[]> {
  const entries: SlotLogEntry[] = [];
  for (;;) {
    const page = await slots.log(entries.at(-1)?.seq ?? seq, 1_000);
    if (page.length === 0) return entries;
    entries.push(...page);
  }
}

/** Every slot was given back: none held, none waiting. */
async function expectAllFree(): Promise<void> {
  const snapshot = await slots.snapshot();
  expect(snapshot.heldByModel).toEqual({});
  expect(snapshot.waiting).toEqual([]);
}

describe('the account’s slots', () => {
  it('never has more jobs in flight than the account’s cap or a model’s, and every slot comes back', async () => {
    // Each job stays in flight for 300 ms, so 2 × 6 pipelines would overlap far beyond the caps without them.
    h.service.service.setFaults({ modelDurationMs: 300 });
    const names = ['cap-a', 'cap-b'];
    const before = { ...h.service.service.counters() };
    const workerSubmitsBefore = h.calls.submit;
    try {
      const results = await runBatches(names.map((name) => batch(name, 6, twoSteps)));
      expect(results.every((r) => r.status === 'completed')).toBe(true);
      const jobs = jobsOf(names);
      expect(jobs).toHaveLength(24);
      expect(new Set(jobs.map((j) => j.idempotencyKey)).size).toBe(24);
      // Waiting jobs were submitted by whoever freed their slot (the bridge at the webhook, a settle) and
      // adopted by their pipelines without a second POST: fewer submits by the worker's activities than
      // jobs, one POST and one job per key.
      const after = h.service.service.counters();
      expect(after.jobsCreated - before.jobsCreated).toBe(24);
      expect(after.submits - before.submits).toBe(24);
      expect(h.calls.submit - workerSubmitsBefore).toBeLessThan(24);
      const ofModel = (model: string) => maxJobsInFlight(jobs.filter((j) => j.model === model));
      // Each cap was reached (so a broken one would show), and none was passed.
      expect(maxJobsInFlight(jobs)).toBe(caps.account);
      expect(ofModel(LONG_FORM)).toBe(2);
      expect(ofModel(UPSCALE)).toBeLessThanOrEqual(2);
    } finally {
      h.service.service.setFaults({ modelDurationMs: 0 });
    }
    await expectAllFree();
  }, 180_000);

  it('a priority-1 pipeline started while a batch has jobs waiting is granted before every one of them', async () => {
    h.service.service.setFaults({ modelDurationMs: 300 });
    let seen = 0;
    let rushSummary: PipelineSummary | undefined;
    try {
      await runBatches([batch('queue', 10)], async () => {
        await eventually(async () => {
          const waiting = (await slots.snapshot()).waiting.find((w) => w.fairnessKey === 'batch/queue');
          return (waiting?.count ?? 0) >= 4;
        }, 'the batch to have jobs waiting');
        const rush = await env.client.workflow.start('pipelineWorkflow', {
          taskQueue: TASK_QUEUE,
          workflowId: pipelineWorkflowId('rush'),
          args: [{ spec: oneStep('rush'), defaultPacing: { earlyCheckSeconds: 0 } }],
          priority: { priorityKey: 1 },
        });
        await eventually(async () => {
          const snapshot = await slots.snapshot();
          const rushWaits = snapshot.waiting.some((w) => w.fairnessKey === 'pipeline/rush' && w.priority === 1);
          const logged = (await logAfter(0)).some((entry) => entry.workflowId === 'pipeline/rush');
          return rushWaits || logged;
        }, 'the rush pipeline to ask for a slot');
        seen = await lastSeq();
        rushSummary = (await rush.result()) as PipelineSummary;
      });
    } finally {
      h.service.service.setFaults({ modelDurationMs: 0 });
    }
    expect(rushSummary?.status).toBe('completed');
    const log = await logAfter(0);
    const rushAt = log.findIndex((entry) => entry.workflowId === 'pipeline/rush');
    expect(log[rushAt]?.priority).toBe(1);
    // No batch job was granted between the moment the rush waited (or was granted) and its grant.
    const between = log.slice(0, rushAt).filter((entry) => entry.seq > seen);
    expect(between).toEqual([]);
    // The batch still had jobs granted after it: they waited, and the rush went first.
    expect(log.slice(rushAt + 1).filter((entry) => entry.fairnessKey === 'batch/queue').length).toBeGreaterThan(0);
    await expectAllFree();
  }, 180_000);

  it('two batches waiting with weights 1 and 3 are granted slots 1:3', async () => {
    h.service.service.setFaults({ modelDurationMs: 200 });
    const start = await lastSeq();
    try {
      const results = await runBatches([
        batch('light', 12, oneStep, { priority: { fairnessKey: 'light', fairnessWeight: 1 } }),
        batch('heavy', 36, oneStep, { priority: { fairnessKey: 'heavy', fairnessWeight: 3 } }),
      ]);
      expect(results.every((r) => r.status === 'completed')).toBe(true);
    } finally {
      h.service.service.setFaults({ modelDurationMs: 0 });
    }
    const log = (await logAfter(start)).filter(
      (entry) => entry.fairnessKey === 'light' || entry.fairnessKey === 'heavy',
    );
    // While both wait: up to the grant that takes either batch's last item, minus the first grants
    // (taken before both had queued).
    const lightLast = log.filter((entry) => entry.fairnessKey === 'light').at(-1)!.seq;
    const heavyLast = log.filter((entry) => entry.fairnessKey === 'heavy').at(-1)!.seq;
    const window = log.filter((entry) => entry.seq <= Math.min(lightLast, heavyLast)).slice(caps.models[LONG_FORM]);
    const light = window.filter((entry) => entry.fairnessKey === 'light').length;
    expect(window.length).toBeGreaterThanOrEqual(16);
    expect(Math.abs(light / window.length - 0.25)).toBeLessThanOrEqual(1 / 8);
    await expectAllFree();
  }, 180_000);

  /**
   * Starts three one-step pipelines whose jobs stay in flight, in order: the first two hold the long-form
   * model's slots, the third waits for one.
   */
  async function twoHoldingOneWaiting(names: [string, string, string]) {
    const handles = [];
    for (const name of names) {
      handles.push(
        await env.client.workflow.start('pipelineWorkflow', {
          taskQueue: TASK_QUEUE,
          workflowId: pipelineWorkflowId(name),
          args: [{ spec: oneStep(name), defaultPacing: { earlyCheckSeconds: 0 } }],
        }),
      );
      await eventually(
        async () =>
          (await logAfter(0)).some((e) => e.workflowId === pipelineWorkflowId(name)) ||
          (await slots.snapshot()).waiting.length > 0,
        `${name} to ask`,
      );
    }
    await eventually(async () => {
      const snapshot = await slots.snapshot();
      return snapshot.heldByModel[LONG_FORM] === 2 && snapshot.waiting.length === 1;
    }, 'two slots held and one waiter');
    return handles;
  }

  it('the reaper frees the slot of a terminated pipeline and skips a terminated waiter', async () => {
    // Jobs that stay in flight: the pipelines hold their slots until they are terminated.
    h.service.service.setFaults({ modelDurationMs: 600_000 });
    try {
      const handles = await twoHoldingOneWaiting(['leak-1', 'leak-2', 'leak-3']);
      // Terminated: no settle frees the first's slot, and the third will never take one.
      await handles[0]!.terminate('leaked on purpose');
      await handles[2]!.terminate('leaked on purpose');
      const reaper = new AccountSlots({
        store: slots,
        caps,
        signaller: () => temporalSlotSignaller(env.client),
        service: h.sideClient,
        reapAfterMs: 0,
      });
      const swept = await reaper.sweep();
      expect(swept.reaped).toBe(1);
      // The freed slot went to the terminated waiter: its job was submitted with the grant, the signal
      // found the run gone, and the job was cancelled and refunded (nobody would ever take it).
      const [unadopted, ...more] = pipelineJobs('leak-3');
      expect(more).toEqual([]);
      expect(unadopted).toMatchObject({ status: 'CANCELLED' });
      expect(unadopted!.creditsRefunded).toBe(unadopted!.creditsCharged);
      const after = await slots.snapshot();
      expect(after.heldByModel).toEqual({ [LONG_FORM]: 1 });
      expect(after.heldByKey).toEqual({ 'pipeline/leak-2': 1 });
      expect(after.waiting).toEqual([]);
      await handles[1]!.terminate('leaked on purpose');
      expect((await reaper.sweep()).reaped).toBe(1);
    } finally {
      h.service.service.setFaults({ modelDurationMs: 0 });
    }
    await expectAllFree();
  }, 120_000);

  it('a waiter cancelled after its job was submitted for it has that job cancelled, refunded', async () => {
    h.service.service.setFaults({ modelDurationMs: 600_000 });
    try {
      const [first, second, waiter] = await twoHoldingOneWaiting(['ahead-1', 'ahead-2', 'ahead-3']);
      const holderOf = async (name: string) =>
        (await logAfter(0)).find((e) => e.workflowId === pipelineWorkflowId(name))!.holder;
      const temporal = temporalSlotSignaller(env.client);
      // Frees the first pipeline's slot by hand; the waiter is cancelled (and closes) between the submit of
      // its job and the grant's signal: the job is never taken by its pipeline.
      const releaser = new AccountSlots({
        store: slots,
        caps,
        service: h.sideClient,
        signaller: () => ({
          async grant(grant) {
            await waiter!.cancel();
            await waiter!.result().catch(() => undefined);
            return temporal.grant(grant);
          },
          running: (workflowId, runId) => temporal.running(workflowId, runId),
        }),
      });
      await first!.terminate('its slot is freed by hand');
      await releaser.release(await holderOf('ahead-1'));
      const [job, ...more] = pipelineJobs('ahead-3');
      expect(more).toEqual([]);
      expect(job).toMatchObject({ status: 'CANCELLED' });
      expect(job!.creditsRefunded).toBe(job!.creditsCharged);
      expect((await waiter!.describe()).status.name).toBe('CANCELLED');
      expect((await slots.snapshot()).heldByKey).toEqual({ 'pipeline/ahead-2': 1 });
      await second!.terminate('its slot is freed by hand');
      await releaser.release(await holderOf('ahead-2'));
    } finally {
      h.service.service.setFaults({ modelDurationMs: 0 });
    }
    await expectAllFree();
  }, 120_000);

  it('with the service answering 429 to a share of submits, every item completes exactly once and the back-off is shared', async () => {
    // The back-off is shared by the workers' clients (this machine's); a bridge with the account's key
    // submits for waiters in one try and leaves a 429 to the pipeline, without a back-off of its own.
    await bridge.stop();
    bridge = await startTestBridge(h.service, env, TASK_QUEUE, { slotCaps: caps, submits: false });
    const faultsBefore = h.service.service.injectedFaults().length;
    h.service.service.setFaults({
      modelDurationMs: 100,
      submitErrorRate: 0.25,
      submitErrorStatus: 429,
      submitRetryAfterSeconds: 1,
    });
    const names = ['busy-a', 'busy-b'];
    try {
      const results = await runBatches(names.map((name) => batch(name, 8)));
      expect(results).toHaveLength(16);
      expect(results.every((r) => r.status === 'completed')).toBe(true);
      const jobs = jobsOf(names);
      expect(jobs).toHaveLength(16);
      expect(new Set(jobs.map((j) => j.idempotencyKey)).size).toBe(16);
      expect(maxJobsInFlight(jobs)).toBeLessThanOrEqual(2);
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
    await expectAllFree();
  }, 180_000);
});
