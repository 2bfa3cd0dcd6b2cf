/**
 * reelflow/workflows: what a team's own workflow code imports from reelflow. Plain CommonJS importing
 * only `@temporalio/workflow` and plain data, so `bundleWorkflowCode` takes it with no webpack hook.
 * Importing is not registering: reelflow's workflow types join a worker through
 * `reelflowPlugin({ workflows: true })` (reelflow/worker).
 *
 * The step functions (`generateVideo`, `revoice`, `upscale`, `runServiceJob`) run one paid job each
 * inside the caller's own workflow, and the local media operations (`concatVideos`, `trimVideo`,
 * `muxAudio`, `takeFrame`) one ffmpeg run each; the worker runs their activities through `reelflowPlugin()`.
 * `awaitApproval` waits for a person's decision (the `decideApproval` update) and costs nothing.
 *
 * @module workflows
 */
import { jobEventSignal } from './definitions';

export {
  generateVideo,
  revoice,
  upscale,
  GENERATE_VIDEO_MODEL,
  REVOICE_MODEL,
  UPSCALE_MODEL,
  type GenerateVideoInput,
  type RevoiceInput,
  type UpscaleInput,
  type ServiceStepResult,
} from './service-steps';
export {
  concatVideos,
  trimVideo,
  muxAudio,
  takeFrame,
  type OpStepResult,
  type OpStepOptions,
  type OpMedia,
  type TrimVideoInput,
  type MuxAudioInput,
  type TakeFrameInput,
} from './op-steps';
export {
  runServiceJob,
  type ServiceJobOptions,
  type ServiceJobOutcome,
  type JobCredits,
} from './steps/job/service-job';
export { awaitApproval, type AwaitApprovalOptions } from './steps/approval/await-approval';
export type {
  ApprovalDecision,
  ApprovalOutput,
  ApprovalVerdict,
  ApprovalView,
  DecideApprovalArgs,
} from './approval-types';
export type { PollPacing } from '../pipeline-spec/pacing';
export { FAILURE_TYPES, type FailureType } from '../contract/failure-types';
export { pipelineWorkflow } from './pipeline';
export { batchWorkflow } from './batch';
export {
  TASK_QUEUES,
  WORKFLOW_TYPES,
  pipelineWorkflowId,
  batchWorkflowId,
  pipelineProgressQuery,
  batchProgressQuery,
  jobEventSignal,
  decideApprovalUpdate,
  SEARCH_ATTRIBUTES,
  SEARCH_ATTRIBUTE_KEYS,
} from './definitions';
export { ACTIVITY_PREFIX, reelflowActivityType } from '../contract/workflow-names';
export type { PipelineSummary, PipelineWorkflowInput } from './pipeline-types';
export type { BatchProgress, BatchWorkflowInput, BatchItemResult } from './batch-types';
export type { PipelineSpec, PipelineStep } from '../pipeline-spec/spec';
export type { ModelId, ModelInputs, JobResult, OutputVideo, WebhookEvent } from '../contract';

/**
 * The same signal as {@link jobEventSignal} (wire name `jobEvent`), under its earlier name.
 *
 * @deprecated Use `jobEventSignal`; this alias goes in the next major version.
 */
export const stepEventSignal = jobEventSignal;
