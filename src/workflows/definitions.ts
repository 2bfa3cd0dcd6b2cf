import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import { defineSearchAttributeKey } from '@temporalio/common';
import type { WebhookEvent } from '../contract';
import type {
  CancelPipelineArgs,
  CancelStepArgs,
  OperatorAnswer,
  PipelineSummary,
  RaiseBudgetArgs,
  RetryStepArgs,
} from './pipeline-types';
import type { BatchItemResult, BatchItemWaiting, BatchProgress, BatchResumeAnswer } from './batch-types';
import type { DecideApprovalArgs } from './approval-types';
import type { ResolveAnswer, ResolveDecision } from './recovery-types';
import type { PreparedSubmission } from '../contract/prepared-submission';
import { QUERY_NAMES, SIGNAL_NAMES, UPDATE_NAMES } from '../contract/workflow-messages';

/**
 * Every signal, update and query of reelflow's workflows, shared by workflows, the bridge and the CLI:
 * with the public types (`*-types.ts`) the only part of src/workflows other code imports (ESLint).
 * Names and ids live in src/contract/workflow-names.ts, the message names in
 * src/contract/workflow-messages.ts (plain data, pinned: running executions read them); src/routing
 * sends by those names and never imports this module. Search attribute names below are pinned too:
 * saved views and running executions carry them.
 */

export {
  TASK_QUEUES,
  WORKFLOW_TYPES,
  ROUTE_SUBSCRIBER_MEMO,
  routeWorkflowId,
  pipelineWorkflowId,
  stepKeyOf,
  batchWorkflowId,
} from '../contract/workflow-names';

/** Bridge → route: a verified webhook event for `request_id`, parked until its subscriber collects it. */
export const webhookEventSignal = defineSignal<[WebhookEvent]>(SIGNAL_NAMES.webhookEvent);

/** A verified webhook event for the workflow waiting on its request (from the bridge or a route workflow). */
export const jobEventSignal = defineSignal<[WebhookEvent]>(SIGNAL_NAMES.jobEvent);

/**
 * Bridge → pipeline: a job's completion together with the next job, which the bridge submitted with
 * the key the pipeline prepared (src/routing/prepared.ts): the pipeline adopts it instead of submitting.
 */
export const preparedJobEventSignal = defineSignal<[WebhookEvent, PreparedSubmission]>(SIGNAL_NAMES.preparedJobEvent);

/** A worker → a pipeline whose submission waited: one of the account's slots is its (the argument: the submission's key). */
export const slotGrantedSignal = defineSignal<[string]>(SIGNAL_NAMES.slotGranted);

/** Submit activity → route workflow: "I am the subscriber (by workflow id); hand me what you parked". */
export const subscribeRouteUpdate = defineUpdate<WebhookEvent[], [{ workflowId: string }]>(UPDATE_NAMES.subscribeRoute);

/** Search attributes of pipeline workflows (registered on the namespace; see SEARCH_ATTRIBUTE_KEYS). Names pinned: running executions and saved views use them. */
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
export const SEARCH_ATTRIBUTE_KEYS = Object.values(SEARCH_ATTRIBUTES);

/** Queries (their result types live next to each workflow). */
export const pipelineProgressQuery = defineQuery<PipelineSummary>(QUERY_NAMES.pipelineProgress);
export const batchProgressQuery = defineQuery<BatchProgress>(QUERY_NAMES.batchProgress);

/** Pipeline of a batch → the batch, by workflow id (so it reaches the current run): "this item ended so". */
export const batchItemDoneSignal = defineSignal<[BatchItemResult]>(SIGNAL_NAMES.batchItemDone);

/** Pipeline of a batch → the batch: the account refused its submit (credits, key, 429s past the bound); it waits. */
export const batchItemWaitingSignal = defineSignal<[BatchItemWaiting]>(SIGNAL_NAMES.batchItemWaiting);

/** Batch → a waiting pipeline of it: the batch was resumed; submit again. */
export const batchResumedSignal = defineSignal<[]>(SIGNAL_NAMES.batchResumed);

/** `reelflow batch resume batch/<id>`: a paused batch starts items again and wakes the waiting ones (refused when not paused). */
export const resumeBatchUpdate = defineUpdate<BatchResumeAnswer, []>(UPDATE_NAMES.resumeBatch);

/** `reelflow budget batch/<id> <credits>`: the batch's new budget (larger than the current one). */
export const raiseBatchBudgetUpdate = defineUpdate<{ budgetCredits: number }, [number]>(UPDATE_NAMES.raiseBatchBudget);

/**
 * What an operator can do to a running pipeline, from the Temporal UI ("Send an Update", under these
 * names) or `reelflow cancel --step / budget / retry`; validators: ./operator-updates.ts.
 */
export const cancelStepUpdate = defineUpdate<OperatorAnswer, [CancelStepArgs]>(UPDATE_NAMES.cancelStep);
export const cancelPipelineUpdate = defineUpdate<OperatorAnswer, [CancelPipelineArgs]>(UPDATE_NAMES.cancelPipeline);
export const raiseBudgetUpdate = defineUpdate<OperatorAnswer, [RaiseBudgetArgs]>(UPDATE_NAMES.raiseBudget);
export const retryStepUpdate = defineUpdate<OperatorAnswer, [RetryStepArgs]>(UPDATE_NAMES.retryStep);

/**
 * A person's decision on an approval gate (`"op": "approval"`, `awaitApproval`): approve or reject the
 * gate `step` that waits; the validator (./steps/approval/gates.ts) refuses any other step.
 */
export const decideApprovalUpdate = defineUpdate<OperatorAnswer, [DecideApprovalArgs]>(UPDATE_NAMES.decideApproval);

/** The operator's decision on an ambiguous submit (validator: ./operator-updates.ts). */
export const resolveAmbiguousUpdate = defineUpdate<ResolveAnswer, [ResolveDecision]>(UPDATE_NAMES.resolveAmbiguousStep);
