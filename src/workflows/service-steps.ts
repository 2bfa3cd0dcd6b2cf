import { ApplicationFailure, CancellationScope, CancelledFailure, workflowInfo } from '@temporalio/workflow';
import type {
  HorizonStudioInput,
  JobResult,
  LongFormInput,
  ModelId,
  ModelInputs,
  UpscaleVideoFastInput,
} from '../contract';
import { FAILURE_TYPES } from '../contract/failure-types';
import {
  ServiceJob,
  workflowJobs,
  type JobCredits,
  type ServiceJobOptions,
  type ServiceJobOutcome,
} from './steps/service-job';

/** The model `generateVideo` runs: a clip from reference images (and optional prompt, audio, video). */
export const GENERATE_VIDEO_MODEL = 'service-video-cinema-long-form-from-references' satisfies ModelId;
/** The model `revoice` runs: a clip re-voiced with a new audio track. */
export const REVOICE_MODEL = 'service-horizon-studio' satisfies ModelId;
/** The model `upscale` runs. */
export const UPSCALE_MODEL = 'service-upscale-video-fast' satisfies ModelId;

/** Input of `generateVideo` (the model's own input fields, docs/service-api.md). */
export type GenerateVideoInput = LongFormInput;
/** Input of `revoice`. */
export type RevoiceInput = HorizonStudioInput;
/** Input of `upscale`. */
export type UpscaleInput = UpscaleVideoFastInput;

/**
 * What a step function returns: the service's result of the completed job (`videos[].url`,
 * `credits_used`, `request_id`, …) with reelflow's account of it.
 */
export type ServiceStepResult = JobResult & {
  /** The request id of the attempt that completed (also the result's `request_id`). */
  requestId: string;
  /** Credits over every attempt: charged, refunded, and the quote when one was asked. */
  credits: JobCredits;
  /**
   * `completed`, or `completed-too-late`: the caller's scope was cancelled after the job completed
   * at the service, so its result is kept (and paid).
   */
  outcome: 'completed' | 'completed-too-late';
};

// Module state is per workflow execution: the jobs this run started, for their default keys.
let jobsStarted = 0;

/**
 * Runs one paid job of the service inside the calling workflow, with everything reelflow guarantees:
 * submit exactly once per attempt (Idempotency-Key; the submit's answer is awaited even under a
 * cancel), the signed webhook awaited with paced status polls as the fallback, the result from the
 * event or `response_url`, the credits (the result's `credits_used`, else the quote), FAILED jobs
 * resubmitted as `maxResubmits` allows. Cancelling the caller's scope cancels the job at the service
 * and awaits its refund.
 *
 * Resolves with the job's outcome: `completed` (or `completed-too-late`) with the service's result,
 * or `cancelled` (refunded). Throws an `ApplicationFailure` whose type says why the job failed:
 * `JobFailed` (the service's own code and message), `BudgetExceeded`, `AmbiguousSubmission`,
 * `SubmitAnswerInvalid`, or a `ServiceProblem:<code>` the service answered the submit with.
 *
 * The worker must run reelflow's activities (`reelflowPlugin()` of reelflow/worker) on the
 * workflow's task queue. Each call without a `key` gets its own: `<workflow id>/<run id>/job/<n>-<model>`,
 * n counting this run's calls, so two calls never share a job.
 *
 * @param model the service's model id
 * @param input the model's input (docs/service-api.md); checked by the service at submit
 * @example
 * const outcome = await runServiceJob('service-upscale-video-fast', { video_url });
 * if (outcome.status !== 'cancelled') console.log(outcome.result.videos[0]?.url);
 */
export function runServiceJob<M extends ModelId>(
  model: M,
  input: ModelInputs[M],
  options: ServiceJobOptions = {},
): Promise<ServiceJobOutcome> {
  jobsStarted += 1;
  const { workflowId, runId } = workflowInfo();
  const key = options.key ?? `${workflowId}/${runId}/job/${jobsStarted}-${model}`;
  return new ServiceJob(model, input as Record<string, unknown>, { ...options, key }).run();
}

/**
 * `runServiceJob` for a step that needs the service's result: resolves with it, and throws when the
 * job did not complete — a `CancelledFailure` when the caller's scope was cancelled, an
 * `ApplicationFailure` of type `JobCancelled` when the job was cancelled at the service by someone
 * else (refunded either way).
 */
async function resultOf<M extends ModelId>(
  model: M,
  input: ModelInputs[M],
  options: ServiceJobOptions = {},
): Promise<ServiceStepResult> {
  let job: ServiceJob | undefined;
  const observe = (observed: ServiceJob) => {
    job = observed;
    options.observe?.(observed);
  };
  const outcome = await runServiceJob(model, input, { ...options, observe });
  // A result without a charge is priced by a quote running beside; the caller gets the settled credits.
  await workflowJobs().charges.settled();
  const credits = job?.credits() ?? outcome.credits;
  if (outcome.status !== 'cancelled')
    return { ...outcome.result, requestId: outcome.requestId, credits, outcome: outcome.status };
  const what = `${model} job${outcome.requestId ? ` ${outcome.requestId}` : ''}`;
  if (CancellationScope.current().consideredCancelled)
    throw new CancelledFailure(`cancelled: the ${what} was cancelled at the service (refunded)`, [{ credits }]);
  throw ApplicationFailure.create({
    type: FAILURE_TYPES.jobCancelled,
    nonRetryable: true,
    message: `the ${what} was cancelled at the service by someone else (refunded); it has no result`,
    details: [{ model, requestId: outcome.requestId, credits }],
  });
}

/**
 * Generates a video from reference images (`service-video-cinema-long-form-from-references`) inside
 * the calling workflow and resolves with the service's result. One paid job with the guarantees of
 * `runServiceJob`; throws as it does, and when the job ends without a result (see `ServiceStepResult`).
 *
 * @example
 * const clip = await generateVideo({ image_urls: [still], prompt: 'a slow pan over the harbour' });
 * const big = await upscale({ video_url: clip.videos[0]!.url });
 */
export function generateVideo(input: GenerateVideoInput, options?: ServiceJobOptions): Promise<ServiceStepResult> {
  return resultOf(GENERATE_VIDEO_MODEL, input, options);
}

/**
 * Re-voices a clip with a new audio track (`service-horizon-studio`) inside the calling workflow and
 * resolves with the service's result; as `generateVideo` otherwise.
 *
 * @example
 * const voiced = await revoice({ video_url: clip.videos[0]!.url, audio_url: narration });
 */
export function revoice(input: RevoiceInput, options?: ServiceJobOptions): Promise<ServiceStepResult> {
  return resultOf(REVOICE_MODEL, input, options);
}

/**
 * Upscales a clip (`service-upscale-video-fast`) inside the calling workflow and resolves with the
 * service's result; as `generateVideo` otherwise.
 */
export function upscale(input: UpscaleInput, options?: ServiceJobOptions): Promise<ServiceStepResult> {
  return resultOf(UPSCALE_MODEL, input, options);
}
