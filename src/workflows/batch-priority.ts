import { workflowInfo, type ChildWorkflowOptions } from '@temporalio/workflow';
import { batchFairnessKey } from '../contract/workflow-names';
import type { PipelineSpec } from '../pipeline-spec/spec';

/** The Temporal priority of a started item (docs/decisions/account-slots.md). */
export type ItemPriority = NonNullable<ChildWorkflowOptions['priority']>;

/** What a batch run hands every item it starts: its own priority, fairness key and weight. */
export interface BatchScheduling {
  /** `reelflow batch --priority`; absent when the batch was started without one. */
  priorityKey?: number;
  /** `--fairness-key`, else the id of the batch the user started (a partition's parent), cut to Temporal's 64 bytes. */
  fairnessKey: string;
  /** `--fairness-weight`; absent when not given (the slots count 1). */
  fairnessWeight?: number;
}

/**
 * This batch run's scheduling, read from its own start. A partition's default key is its parent's id,
 * not its own (`batch/<id>/part-<k>`): a partitioned batch is one key in the fair share, as one batch
 * is, and `reelflow status batch/<id>` finds its slots under that key. Temporal reports a field that
 * was not set as 0 or "" (not set), which this reads as absent.
 */
export function batchScheduling(partition: boolean): BatchScheduling {
  const { priority, parent, workflowId } = workflowInfo();
  const key = priority?.priorityKey;
  const weight = priority?.fairnessWeight;
  return {
    ...(key !== undefined && key >= 1 ? { priorityKey: key } : {}),
    fairnessKey: priority?.fairnessKey || batchFairnessKey(partition && parent ? parent.workflowId : workflowId),
    ...(weight !== undefined && weight > 0 ? { fairnessWeight: weight } : {}),
  };
}

/**
 * The priority an item starts with: the batch's `--priority` when given (it overrides every item's),
 * else the item spec's top-level `priority`, else none (Temporal's default, 3); always the batch's
 * fairness key and weight. Set in full rather than left to Temporal's inheritance from the batch,
 * which knows neither the spec's priority nor the root of a partitioned batch.
 */
export function itemPriority(spec: Pick<PipelineSpec, 'priority'>, batch: BatchScheduling): ItemPriority {
  const priorityKey = batch.priorityKey ?? spec.priority;
  return {
    ...(priorityKey !== undefined ? { priorityKey } : {}),
    fairnessKey: batch.fairnessKey,
    ...(batch.fairnessWeight !== undefined ? { fairnessWeight: batch.fairnessWeight } : {}),
  };
}
