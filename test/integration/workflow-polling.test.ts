import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { WorkflowFailedError } from '@temporalio/client';
import type { ApplicationFailure } from '@temporalio/common';
import { startTimeSkippingServer } from '../helpers/temporal';
import { LONG_FORM, PIXEL_PNG } from '../helpers/local-service';
import { MODELS, type LongFormInput } from '../../src/contract';
import { pollOffsetSeconds, pollsWithin, resolvePacing } from '../../src/spec';
import { jobStateQuery, jobWorkflowId } from '../../src/workflows/definitions';
import type { JobOutcome, JobWorkflowInput } from '../../src/workflows/job-types';
import {
  bundleReelflowWorkflows,
  eventually,
  maybeRecordHistory,
  startHarness,
  type Harness,
} from './workflow-harness';

/**
 * The fallback polling path on the time-skipping server: no webhook is ever delivered, so every
 * outcome is learned by polls whose timers are skipped, never waited for.
 */
let bundle: WorkflowBundleWithSourceMap;
let env: TestWorkflowEnvironment;
let h: Harness;
const TASK_QUEUE = 'workflow-polling-test';
const INPUT: LongFormInput = { image_urls: [PIXEL_PNG] };
const PACING = resolvePacing(MODELS[LONG_FORM].expectedRunSeconds);

beforeAll(async () => {
  [bundle, env] = await Promise.all([bundleReelflowWorkflows(), startTimeSkippingServer()]);
  // One job at a time per model, so a blocker holds the job under test in the queue.
  h = await startHarness(env, bundle, TASK_QUEUE, { concurrencyPerModel: 1 });
}, 120_000);

afterAll(async () => {
  await h?.close();
  await env?.teardown();
});

function startJob(step: string, extra: Partial<JobWorkflowInput> = {}) {
  return env.client.workflow.start('jobWorkflow', {
    taskQueue: TASK_QUEUE,
    workflowId: jobWorkflowId('polling', step),
    args: [{ pipeline: 'polling', step, model: LONG_FORM, input: INPUT, ...extra } satisfies JobWorkflowInput],
  });
}

/** Occupies the long-form queue with a job that would run for ten minutes (real time). */
async function startBlocker(): Promise<string> {
  h.service.service.setFaults({ modelDurationMs: { [LONG_FORM]: 600_000 } });
  const blocker = await h.sideClient.submit(LONG_FORM, INPUT);
  await eventually(
    () => h.service.service.jobs().some((j) => j.id === blocker.request_id && j.status === 'IN_PROGRESS'),
    'blocker running',
  );
  h.service.service.setFaults({ modelDurationMs: 0 });
  return blocker.request_id;
}

const jobFor = (step: string) =>
  h.service.service.jobs().find((j) => j.idempotencyKey?.includes(`polling/job/${step}:`));

describe('job workflow, polling fallback (time-skipping server)', () => {
  it('completes without any event, after a number of polls that follows the pacing formula', async () => {
    const blocker = await startBlocker();
    try {
      const statusBefore = h.service.service.counters().statusCalls;
      const handle = await startJob('paced');
      await eventually(() => jobFor('paced')?.status === 'IN_QUEUE', 'job queued');
      // Skip 1000 s of workflow time while the job sits in the queue: polls at 180, 480, 780 s.
      await env.sleep('1000 seconds');
      const waiting = await handle.query(jobStateQuery);
      expect(pollsWithin(PACING, 1000)).toBe(3);
      expect(waiting.polls).toBe(3);
      expect(waiting.pollOffsetsSeconds.map(Math.floor)).toEqual([0, 1, 2].map((k) => pollOffsetSeconds(PACING, k)));
      // Free the queue; the job completes at the service; the next poll (at 1080 s) finds it.
      await h.sideClient.cancel(blocker);
      await eventually(() => jobFor('paced')?.status === 'COMPLETED', 'job completed');
      const outcome = (await handle.result()) as JobOutcome;
      await maybeRecordHistory(handle, 'job-polling-paced');
      expect(outcome.phase).toBe('completed');
      expect(outcome.polls).toBe(4);
      expect(outcome.pollOffsetsSeconds.map(Math.floor)).toEqual([0, 1, 2, 3].map((k) => pollOffsetSeconds(PACING, k)));
      expect(outcome.attempts[0]).toMatchObject({ learnedBy: 'poll', resultFrom: 'fetch' });
      expect(outcome.result?.videos[0]?.url).toMatch(/\/files\//);
      expect(h.service.service.counters().statusCalls - statusBefore).toBe(4);
    } finally {
      // Frees the queue for the next test even when an assertion failed (a second cancel is refused, harmlessly).
      await h.sideClient.cancel(blocker).catch(() => undefined);
    }
  });

  it('detects a job cancelled at the service, with no event, by polling', async () => {
    const blocker = await startBlocker();
    let outcome: JobOutcome;
    try {
      const handle = await startJob('cancelled-elsewhere');
      const job = await eventually(
        () => (jobFor('cancelled-elsewhere')?.status === 'IN_QUEUE' ? jobFor('cancelled-elsewhere') : undefined),
        'job queued',
      );
      await h.sideClient.cancel(job.id);
      outcome = (await handle.result()) as JobOutcome;
      await maybeRecordHistory(handle, 'job-polling-cancelled');
    } finally {
      await h.sideClient.cancel(blocker);
    }
    expect(outcome.phase).toBe('cancelled');
    expect(outcome.polls).toBe(1);
    expect(outcome.attempts[0]).toMatchObject({ outcome: 'CANCELLED', learnedBy: 'poll', charged: 80, refunded: 80 });
  });

  it('detects a failed job, with no event, by polling, and fails with JobFailed when the policy allows no resubmit', async () => {
    h.service.service.setFaults({ failureRate: 1 });
    try {
      const handle = await startJob('failed');
      // Workflow time stands still until the test waits on the result: the first poll sees FAILED.
      await eventually(() => jobFor('failed')?.status === 'FAILED', 'job failed at the service');
      const error = await handle.result().then(
        () => null,
        (e: unknown) => e,
      );
      await maybeRecordHistory(handle, 'job-polling-failed');
      expect(error).toBeInstanceOf(WorkflowFailedError);
      const cause = (error as WorkflowFailedError).cause as ApplicationFailure;
      expect(cause.type).toBe('JobFailed');
      expect(cause.message).toMatch(/failed 1 time\(s\); policy allows 0 resubmit\(s\); every attempt was refunded/);
      const state = await handle.query(jobStateQuery);
      expect(state.phase).toBe('failed');
      expect(state.polls).toBe(1);
      expect(state.attempts[0]).toMatchObject({ outcome: 'FAILED', learnedBy: 'poll', charged: 80, refunded: 80 });
    } finally {
      h.service.service.setFaults({ failureRate: 0 });
    }
  });

  it('resubmits a failed job after the backoff, with a fresh key, as its policy allows (both refunded at the service)', async () => {
    h.service.service.setFaults({ failureRate: 1 });
    try {
      const handle = await startJob('resubmitted', { maxResubmits: 1 });
      const error = await handle.result().then(
        () => null,
        (e: unknown) => e,
      );
      await maybeRecordHistory(handle, 'job-polling-resubmitted');
      expect(((error as WorkflowFailedError).cause as ApplicationFailure).message).toMatch(
        /failed 2 time\(s\); policy allows 1 resubmit\(s\)/,
      );
      const jobs = h.service.service.jobs().filter((j) => j.idempotencyKey?.includes('polling/job/resubmitted:'));
      expect(jobs.map((j) => [j.idempotencyKey?.slice(-2), j.status, j.creditsRefunded])).toEqual([
        [':1', 'FAILED', 80],
        [':2', 'FAILED', 80],
      ]);
      const state = await handle.query(jobStateQuery);
      expect(state.attempts.map((a) => a.outcome)).toEqual(['FAILED', 'FAILED']);
    } finally {
      h.service.service.setFaults({ failureRate: 0 });
    }
  });
});
