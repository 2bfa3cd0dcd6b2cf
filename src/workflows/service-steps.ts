import { ApplicationFailure, CancellationScope, CancelledFailure } from '@temporalio/workflow';
import type {
  RevoiceInput as RevoiceModelInput,
  JobResult,
  LongFormInput,
  ModelId,
  ModelInputs,
  UpscaleVideoFastInput,
} from '../contract';
import { FAILURE_TYPES } from '../contract/failure-types';
import { LONG_FORM } from '../contract/models/long-form';
import { REVOICE } from '../contract/models/revoice';
import { UPSCALE } from '../contract/models/upscale';
import { chargesSettled, ServiceJob, type JobCredits, type ServiceJobOptions } from './steps/job/service-job';

/** The model `generateVideo` runs: a clip from reference images (and optional prompt, audio, video). */
export const GENERATE_VIDEO_MODEL = LONG_FORM.id satisfies ModelId;
/** The model `revoice` runs: a clip re-voiced with a new audio track. */
export const REVOICE_MODEL = REVOICE.id satisfies ModelId;
/** The model `upscale` runs. */
export const UPSCALE_MODEL = UPSCALE.id satisfies ModelId;

/** Input of `generateVideo` (the model's own input fields, docs/service-api.md). */
export type GenerateVideoInput = LongFormInput;
/** Input of `revoice`. */
export type RevoiceInput = RevoiceModelInput;
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

/**
 * `runServiceJob` for a step that needs the service's result: a job that did not complete throws
 * (`CancelledFailure` when the caller's scope was cancelled, else `JobCancelled`).
 */
async function resultOf<M extends ModelId>(
  model: M,
  input: ModelInputs[M],
  options: ServiceJobOptions = {},
): Promise<ServiceStepResult> {
  const job = new ServiceJob(model, input as Record<string, unknown>, options);
  const outcome = await job.run();
  // A result without a charge is priced by a quote running beside; the caller gets the settled credits.
  await chargesSettled();
  const credits = job.credits();
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
 * Generates a video from reference images (the long-form model, `GENERATE_VIDEO_MODEL`) inside
 * the calling workflow: one paid job as `runServiceJob` runs it; throws as it does, and when there is no result.
 *
 * @example
 * const clip = await generateVideo({ image_urls: [still], prompt: 'a slow pan over the harbour' });
 * const big = await upscale({ video_url: clip.videos[0]!.url });
 */
export function generateVideo(input: GenerateVideoInput, options?: ServiceJobOptions): Promise<ServiceStepResult> {
  return resultOf(GENERATE_VIDEO_MODEL, input, options);
}

/**
 * Re-voices a clip with a new audio track (`REVOICE_MODEL`) inside the calling workflow and
 * resolves with the service's result; as `generateVideo` otherwise.
 *
 * @example
 * const voiced = await revoice({ video_url: clip.videos[0]!.url, audio_url: narration });
 */
export function revoice(input: RevoiceInput, options?: ServiceJobOptions): Promise<ServiceStepResult> {
  return resultOf(REVOICE_MODEL, input, options);
}

/**
 * Upscales a clip (`UPSCALE_MODEL`) inside the calling workflow and resolves with the
 * service's result; as `generateVideo` otherwise.
 */
export function upscale(input: UpscaleInput, options?: ServiceJobOptions): Promise<ServiceStepResult> {
  return resultOf(UPSCALE_MODEL, input, options);
}
