/**
 * Every Temporal `ApplicationFailure` type reelflow throws, in one table: activities throw them,
 * workflows and the CLI branch on them. Plain data with no imports, so workflows import it by
 * value (it lands in every workflow bundle).
 *
 * The VALUES are part of running workflow histories: a failure recorded under one of these names
 * is matched by name on replay, so never change a value; add a new entry instead.
 */
export const FAILURE_TYPES = {
  // Thrown by the service-call activities (src/activities/errors.ts maps the client's errors).
  /** A submit may have been accepted but no answer came back; names the Idempotency-Key. Non-retryable unless the service honours keys. */
  ambiguousSubmission: 'AmbiguousSubmission',
  /** A 2xx submit answer that breaks the contract: the job exists; details say what could be read of it. */
  submitAnswerInvalid: 'SubmitAnswerInvalid',
  /** The request never reached the service (retryable). */
  serviceUnreachable: 'ServiceUnreachable',
  /** The call did not finish in time (retryable). */
  serviceTimeout: 'ServiceTimeout',
  /** A 2xx answer whose body does not match the contract. */
  unexpectedResponse: 'UnexpectedResponse',
  /** A problem document; thrown as `ServiceProblem:<code>` (see serviceProblemType). */
  serviceProblem: 'ServiceProblem',

  // Thrown by the preflight and media activities.
  /** Preflight found an input the service would refuse (also the pipeline's failure when it ends there). */
  preflightRefused: 'PreflightRefused',
  /** Preflight could not check an input (retryable). */
  preflightUnavailable: 'PreflightUnavailable',
  /** A media-store reference could not be resolved, or the worker has no media store. */
  mediaUnavailable: 'MediaUnavailable',
  /** Copying a step's outputs into the media store failed. */
  archiveFailed: 'ArchiveFailed',

  // Thrown by the local media operations (op steps: concat, trim, mux_audio, frame).
  /** An operation's input is not what it needs (not a video, no audio stream, a time past its end); names the field. */
  opInputInvalid: 'OpInputInvalid',
  /** ffmpeg failed on an operation's inputs, or made no usable output; carries its stderr tail. */
  opFailed: 'OpFailed',

  // Thrown by the workflows (job, pipeline steps, pipeline, batch).
  /** A job or step would spend more than its budget. */
  budgetExceeded: 'BudgetExceeded',
  /** The generation failed past the retry policy. */
  jobFailed: 'JobFailed',
  /**
   * The provider had not started the job (still IN_QUEUE) by the step's `startDeadlineSeconds`: it was
   * cancelled while cancelling was free (refunded); the step's resubmit policy applies before it fails.
   */
  startDeadlineExceeded: 'StartDeadlineExceeded',
  /** A step function's job was cancelled at the service by someone else (refunded): it has no result. */
  jobCancelled: 'JobCancelled',
  /** The pipeline spec given to the workflow is invalid. */
  invalidPipelineSpec: 'InvalidPipelineSpec',
  /** A step failed; the pipeline ends with it (the message names the step and the cause's type). */
  stepFailed: 'StepFailed',
  /** The pipeline was cancelled while a step ran. */
  stepCancelled: 'StepCancelled',
  /** An approval gate was rejected (by a person or its timeout): the pipeline ends `rejected`, nothing after the gate ran. */
  approvalRejected: 'ApprovalRejected',
  /** A batch names two pipelines alike (pipeline names are workflow ids). */
  invalidBatch: 'InvalidBatch',
} as const;

/** One of the failure types of FAILURE_TYPES. */
export type FailureType = (typeof FAILURE_TYPES)[keyof typeof FAILURE_TYPES];

/** The failure type of a service problem document: `ServiceProblem:<code>` (workflows may branch on either part). */
export function serviceProblemType(code: string): string {
  return `${FAILURE_TYPES.serviceProblem}:${code}`;
}
