import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import { defineSearchAttributeKey } from '@temporalio/common';
import type { WebhookEvent } from '../contract';
import type { JobState } from './job-types';
import type { PipelineSummary } from './pipeline-types';
import type { BatchItemResult, BatchProgress } from './batch-types';

/**
 * Signals, updates and queries shared by workflows, the bridge and the CLI. Deterministic: imports
 * only `@temporalio/workflow`, `@temporalio/common`, plain data and types. Task queues, workflow
 * types and ids live in src/contract/workflow-names.ts (plain data src/config imports too); they are
 * re-exported here for the code that takes them with the signals and queries.
 */

export {
  TASK_QUEUES,
  WORKFLOW_TYPES,
  RENDEZVOUS_WORKFLOW_TYPE,
  ROUTE_WORKFLOW_TYPE,
  ROUTE_SUBSCRIBER_MEMO,
  rendezvousWorkflowId,
  pipelineWorkflowId,
  jobWorkflowId,
  batchWorkflowId,
} from '../contract/workflow-names';

/** Bridge → rendezvous: a verified webhook event for `request_id`. */
export const webhookEventSignal = defineSignal<[WebhookEvent]>('webhookEvent');

/** Job workflow → rendezvous: "forward events for this request to me". */
export interface Subscription {
  workflowId: string;
}
export const subscribeSignal = defineSignal<[Subscription]>('subscribe');

/**
 * A verified webhook event for the receiver: the pipeline workflow (sent by the bridge directly, or
 * forwarded by the route workflow), or a legacy job workflow (forwarded by its rendezvous).
 */
export const jobEventSignal = defineSignal<[WebhookEvent]>('jobEvent');

/** Submit activity → route workflow: "I am the subscriber; hand me what you parked". */
export const subscribeRouteUpdate = defineUpdate<WebhookEvent[], [Subscription]>('subscribeRoute');

// ---- Pipelines (issue 4) -------------------------------------------------------------------

/** Search attributes of pipeline workflows (registered on the namespace; see SEARCH_ATTRIBUTE_KEYS). */
export const SEARCH_ATTRIBUTES = {
  status: defineSearchAttributeKey('ReelflowStatus', 'KEYWORD'),
  currentStep: defineSearchAttributeKey('ReelflowCurrentStep', 'KEYWORD'),
  creditsSpent: defineSearchAttributeKey('ReelflowCreditsSpent', 'INT'),
  requestIds: defineSearchAttributeKey('ReelflowRequestIds', 'KEYWORD_LIST'),
  /** The pipeline's name (the `<name>` of `pipeline/<name>`), for saved views and links. */
  pipeline: defineSearchAttributeKey('ReelflowPipeline', 'KEYWORD'),
  /** Every model the pipeline's steps use. */
  models: defineSearchAttributeKey('ReelflowModels', 'KEYWORD_LIST'),
  /** True once a step was stopped because its quote exceeded the remaining budget. */
  overBudget: defineSearchAttributeKey('ReelflowOverBudget', 'BOOL'),
  /** The batch a pipeline is an item of (the `<name>` of `batch/<name>`), so the UI lists a batch's items. */
  batch: defineSearchAttributeKey('ReelflowBatch', 'KEYWORD'),
} as const;

/** Every custom search attribute reelflow sets, for `startDevServer({ searchAttributes })` and operator setup. */
export const SEARCH_ATTRIBUTE_KEYS = [
  SEARCH_ATTRIBUTES.status,
  SEARCH_ATTRIBUTES.currentStep,
  SEARCH_ATTRIBUTES.creditsSpent,
  SEARCH_ATTRIBUTES.requestIds,
  SEARCH_ATTRIBUTES.pipeline,
  SEARCH_ATTRIBUTES.models,
  SEARCH_ATTRIBUTES.overBudget,
  SEARCH_ATTRIBUTES.batch,
];

/** Queries (their result types live next to each workflow). */
export const jobStateQuery = defineQuery<JobState>('jobState');
export const pipelineProgressQuery = defineQuery<PipelineSummary>('pipelineProgress');
export const batchProgressQuery = defineQuery<BatchProgress>('batchProgress');

/**
 * Pipeline of a batch → the batch (by workflow id, so it reaches the current run after any
 * continue-as-new): "this item ended so".
 */
export const batchItemDoneSignal = defineSignal<[BatchItemResult]>('batchItemDone');

/** `reelflow budget batch/<id> <credits>`: the batch's new budget (larger than the current one). */
export const raiseBatchBudgetUpdate = defineUpdate<{ budgetCredits: number }, [number]>('raiseBatchBudget');
