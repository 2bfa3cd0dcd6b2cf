import { ApplicationFailure } from '@temporalio/common';
import { Context } from '@temporalio/activity';
import type { OpActivities, ReelflowActivities, SubmitAnswer, SubmitRequest } from '../../src/activities';
import { FAILURE_TYPES } from '../../src/contract/failure-types';
import type { JobResult, JobState, ModelId } from '../../src/contract';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker, type WorkerOptions } from '@temporalio/worker';
import { prefixedActivities } from '../../src/plugin/activity-types';
import { startTimeSkippingServer } from '../helpers/temporal';

/**
 * The paid service as the pipeline's activities see it, scripted per pipeline: the only test double
 * of the fast workflow tier (the workflow, the worker and the Temporal server are real). Every call is
 * recorded with the workflow time it was scheduled at (the time-skipping server's clock), so tests
 * read the pipeline's timing from what it asked the service and when.
 */

/** The activities a pipeline calls (the batch's are left out: pipelines never call them). */
export type PipelineActivities = Omit<ReelflowActivities, 'readBatchPage' | 'writeBatchResults'>;

/** How one submitted job behaves at the service. */
export interface ScriptedJob {
  /** Seconds (workflow time) the job waits IN_QUEUE after its submit before it starts. Default 0. */
  queuedSeconds?: number;
  /** Seconds (workflow time) after it started at which the job reaches `ends`. Default 0. */
  runSeconds?: number;
  /** Its terminal state. Default COMPLETED. */
  ends?: Extract<JobState, 'COMPLETED' | 'FAILED' | 'CANCELLED'>;
}

/** What the service does for one pipeline (keyed by the pipeline's workflow id). */
export interface Script {
  /** Quote of every step's job, credits. Default 80. */
  quote?: number;
  /**
   * The job submit number `n` (1-based, over the whole pipeline) creates, told the request (its
   * Idempotency-Key names the step and item: a graph's parallel submits come in any order); default: completes at once.
   */
  job?: (n: number, request: SubmitRequest) => ScriptedJob;
  /** Submit number `n` gets no usable answer: throws the activities' AmbiguousSubmission failure. */
  ambiguous?: (n: number) => boolean;
  /** The URL of job `requestId`'s output video (default one of https://service.test). */
  outputUrl?: (requestId: string) => string;
}

/** One activity call as the service saw it. */
export interface ServiceCall {
  activity: keyof PipelineActivities;
  /** Workflow time at which the workflow scheduled this attempt of the activity, epoch ms. */
  atMs: number;
  args: unknown[];
}

interface Job extends Required<ScriptedJob> {
  requestId: string;
  model: ModelId;
  submittedAtMs: number;
  credits: number;
  outputUrl?: string;
}

/** The scripted service: its activities for a worker, the scripts by workflow id and every call made. */
export interface ScriptedService {
  activities: PipelineActivities;
  /** Sets what the service does for the pipeline whose workflow id is `workflowId`. */
  script(workflowId: string, script: Script): void;
  /** Calls the pipeline `workflowId` made, in order; optionally only those of `activity`. */
  calls(workflowId: string, activity?: keyof PipelineActivities): ServiceCall[];
  /** The state job `requestId` was in when its cancel reached the service (undefined: never cancelled). */
  cancelledFrom(requestId: string): JobState | undefined;
}

const SERVICE = 'https://service.test';

/**
 * `ops`: the local media operations op steps run (real ones: they are not the paid service); without
 * them an op step fails.
 */
export function scriptedService(ops?: OpActivities): ScriptedService {
  const scripts = new Map<string, Script>();
  const calls = new Map<string, ServiceCall[]>();
  const jobs = new Map<string, Job>();
  const submits = new Map<string, number>();

  /** Records the call and returns the workflow's script and the call's workflow time. */
  const record = (activity: keyof PipelineActivities, args: unknown[]) => {
    const info = Context.current().info;
    const workflowId = info.workflowExecution?.workflowId ?? '';
    const atMs = info.currentAttemptScheduledTimestampMs;
    const list = calls.get(workflowId) ?? [];
    list.push({ activity, atMs, args });
    calls.set(workflowId, list);
    return { script: scripts.get(workflowId) ?? {}, workflowId, atMs };
  };
  const jobOf = (requestId: string): Job => {
    const job = jobs.get(requestId);
    if (!job) throw ApplicationFailure.nonRetryable(`no job ${requestId}`, 'ServiceProblem:not_found');
    return job;
  };
  const cancelled = new Map<string, JobState>();
  const stateAt = (job: Job, atMs: number): JobState => {
    const startsAtMs = job.submittedAtMs + job.queuedSeconds * 1000;
    if (atMs < startsAtMs) return 'IN_QUEUE';
    return atMs >= startsAtMs + job.runSeconds * 1000 ? job.ends : 'IN_PROGRESS';
  };
  const resultOf = (job: Job): JobResult => ({
    request_id: job.requestId,
    status: 'COMPLETED',
    model: job.model,
    credits_used: job.credits,
    videos: [
      {
        url: job.outputUrl ?? `${SERVICE}/files/${job.requestId}.mp4`,
        file_name: 'out.mp4',
        content_type: 'video/mp4',
      },
    ],
  });

  const activities: PipelineActivities = {
    async preflightJob(model) {
      return { model, checks: [] };
    },
    async checkPipeline() {
      return { ok: true, refused: [], submitAs: 'activity' };
    },
    // The account's slots are not scripted: the account has no cap here (test/integration/account-slots.test.ts).
    async awaitAccountPermit(...args) {
      record('awaitAccountPermit', args);
    },
    async releaseAccountPermit(...args) {
      record('releaseAccountPermit', args);
    },
    // Submits as an activity: nothing is prepared, so nothing is revoked (test/integration/prepared-submits.test.ts).
    async revokePreparedSubmits(...args) {
      record('revokePreparedSubmits', args);
      return [];
    },
    async quoteJob(...args) {
      const { script } = record('quoteJob', args);
      return { credits: script.quote ?? 80, pricingUnit: 'per-request' };
    },
    async submitAndSubscribe(request: SubmitRequest): Promise<SubmitAnswer> {
      const { script, workflowId, atMs } = record('submitAndSubscribe', [request]);
      const n = (submits.get(workflowId) ?? 0) + 1;
      submits.set(workflowId, n);
      if (script.ambiguous?.(n))
        throw ApplicationFailure.create({
          type: FAILURE_TYPES.ambiguousSubmission,
          nonRetryable: true,
          message: 'the connection closed before the answer',
        });
      const requestId = `${workflowId.replace(/\W+/g, '-')}-${n}`;
      const scripted = script.job?.(n, request) ?? {};
      jobs.set(requestId, {
        requestId,
        model: request.model,
        submittedAtMs: atMs,
        credits: script.quote ?? 80,
        queuedSeconds: scripted.queuedSeconds ?? 0,
        runSeconds: scripted.runSeconds ?? 0,
        ends: scripted.ends ?? 'COMPLETED',
        ...(script.outputUrl ? { outputUrl: script.outputUrl(requestId) } : {}),
      });
      return {
        request: {
          request_id: requestId,
          status: 'IN_QUEUE',
          model: request.model,
          status_url: `${SERVICE}/requests/${requestId}/status`,
          response_url: `${SERVICE}/requests/${requestId}`,
          cancel_url: `${SERVICE}/requests/${requestId}/cancel`,
        },
        earlyEvents: [],
      };
    },
    async pollJobStatus(...args) {
      const { atMs } = record('pollJobStatus', args);
      const job = jobOf(args[0]);
      const status = stateAt(job, atMs);
      return {
        request_id: job.requestId,
        status,
        ...(status === 'FAILED' ? { error: { code: 'generation_failed', message: 'the model gave up' } } : {}),
      };
    },
    async fetchJobResult(...args) {
      record('fetchJobResult', args);
      return resultOf(jobOf(args[0]));
    },
    async cancelJob(...args) {
      const { atMs } = record('cancelJob', args);
      const job = jobOf(args[0]);
      const state = stateAt(job, atMs);
      if (state === 'IN_PROGRESS' || state === 'IN_QUEUE') {
        cancelled.set(job.requestId, state);
        Object.assign(job, { queuedSeconds: 0, runSeconds: 0, ends: 'CANCELLED', submittedAtMs: atMs });
      }
      return { request_id: job.requestId, status: stateAt(job, atMs) };
    },
    async candidateOrphans(...args) {
      record('candidateOrphans', args);
      return [];
    },
    async archiveOutputs(...args) {
      record('archiveOutputs', args);
      return [];
    },
    async runOp(...args) {
      record('runOp', args);
      if (!ops)
        throw ApplicationFailure.nonRetryable('this scripted worker runs no operations', FAILURE_TYPES.opFailed);
      return ops.runOp(...args);
    },
  };

  return {
    activities,
    script: (workflowId, script) => scripts.set(workflowId, script),
    calls: (workflowId, activity) =>
      (calls.get(workflowId) ?? []).filter((call) => activity === undefined || call.activity === activity),
    cancelledFrom: (requestId) => cancelled.get(requestId),
  };
}

/** The result a completed-event of `requestId` carries, as the bridge would signal it (`jobEvent`). */
export function completedEvent(requestId: string, model: ModelId, credits: number) {
  return {
    event_id: `evt_${requestId}`,
    event_type: 'generation.completed',
    api_version: '2025-01-01',
    created_at: new Date().toISOString(),
    request_id: requestId,
    status: 'OK',
    data: {
      request_id: requestId,
      status: 'COMPLETED',
      model,
      credits_used: credits,
      videos: [{ url: `${SERVICE}/files/${requestId}.mp4`, file_name: 'out.mp4', content_type: 'video/mp4' }],
      gateway_request_id: requestId,
      output_count: 1,
    },
    error: null,
  };
}

/** The time-skipping server and a real worker on `taskQueue` whose activities are `service`'s scripts. */
export interface ScriptedWorker {
  env: TestWorkflowEnvironment;
}

/**
 * Starts the time-skipping server and a worker running `workflows` (a bundle, or a module the worker
 * bundles) with `service`'s scripted activities in this test file's `beforeAll`, and stops both in its
 * `afterAll`. `env` is set once `beforeAll` has run.
 */
export function useScriptedWorker(
  taskQueue: string,
  service: ScriptedService,
  workflows: () => Promise<Pick<WorkerOptions, 'workflowBundle' | 'workflowsPath'>>,
): ScriptedWorker {
  const started = {} as ScriptedWorker;
  let worker: Worker | undefined;
  let running: Promise<void> | undefined;
  beforeAll(async () => {
    const [source, env] = await Promise.all([workflows(), startTimeSkippingServer()]);
    started.env = env;
    worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue,
      ...source,
      activities: prefixedActivities(service.activities),
    });
    running = worker.run();
  }, 120_000);
  afterAll(async () => {
    worker?.shutdown();
    await running;
    await started.env?.teardown();
  });
  return started;
}
