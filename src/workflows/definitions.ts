import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import { defineSearchAttributeKey } from '@temporalio/common';
import type { WebhookEvent } from '../contract';
import type { JobState } from './job-types';
import type { PipelineSummary } from './pipeline-types';
import type { BatchProgress } from './batch-types';

/**
 * Signals, updates and queries shared by workflows, the bridge and the CLI. Deterministic: imports
 * only `@temporalio/workflow`, `@temporalio/common` and types.
 */

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

/** Rendezvous workflow id for a service request id. One execution per id is Temporal's guarantee. */
export function rendezvousWorkflowId(requestId: string): string {
  return `webhook/${requestId}`;
}

/** Name of the legacy rendezvous workflow type (started by legacy job workflows' subscribe activity). */
export const RENDEZVOUS_WORKFLOW_TYPE = 'webhookRendezvousWorkflow';

/**
 * Name of the per-request route workflow type (id `webhook/<request_id>`, like the rendezvous): it
 * names the subscriber in its memo so the bridge signals the pipeline directly, and parks events
 * that arrive before any subscriber (docs/webhook-routing.md).
 */
export const ROUTE_WORKFLOW_TYPE = 'webhookRouteWorkflow';

/** Memo key of a route workflow naming its subscriber's workflow id. */
export const ROUTE_SUBSCRIBER_MEMO = 'subscriber';

/** Submit activity → route workflow: "I am the subscriber; hand me what you parked". */
export const subscribeRouteUpdate = defineUpdate<WebhookEvent[], [Subscription]>('subscribeRoute');

/** Task queue names, in one place. */
export const TASK_QUEUES = {
  pipelines: 'reelflow-pipelines',
} as const;

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
];

/** Readable workflow ids: `pipeline/<name>` and `<name>/job/<step>`. */
export function pipelineWorkflowId(pipelineName: string): string {
  return `pipeline/${pipelineName}`;
}
export function jobWorkflowId(pipelineName: string, stepId: string): string {
  return `${pipelineName}/job/${stepId}`;
}
export function batchWorkflowId(batchName: string): string {
  return `batch/${batchName}`;
}

/** Workflow type names, for starting by name from the CLI or other processes. */
export const WORKFLOW_TYPES = {
  job: 'jobWorkflow',
  pipeline: 'pipelineWorkflow',
  batch: 'batchWorkflow',
} as const;

/** Queries (their result types live next to each workflow). */
export const jobStateQuery = defineQuery<JobState>('jobState');
export const pipelineProgressQuery = defineQuery<PipelineSummary>('pipelineProgress');
export const batchProgressQuery = defineQuery<BatchProgress>('batchProgress');
