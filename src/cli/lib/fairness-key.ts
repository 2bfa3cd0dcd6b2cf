import type { WorkflowExecutionDescription } from '@temporalio/client';
import { batchFairnessKey } from '../../contract';
import type { FoundWorkflow } from './context';

/** A partition of a partitioned batch: `batch/<id>/part-<k>`. */
const PARTITION_ID = /\/part-\d+$/;

/**
 * The fairness key under which the slots of `found` are counted (docs/decisions/account-slots.md), as
 * `reelflow status` shows its share: the key it was started with (`--fairness-key`, or the key a batch
 * gave its item); else a batch's own id or a partition's batch's id (as `batchFairnessKey` cuts it), or
 * a pipeline's parent (an item a batch started before items carried their key) or its own id, as the
 * submit's waiter row names it.
 */
export async function fairnessKeyOf(found: FoundWorkflow): Promise<string> {
  return fairnessKeyFrom(found, await found.handle.describe());
}

/** `fairnessKeyOf`, from the workflow's description. */
export function fairnessKeyFrom(
  found: Pick<FoundWorkflow, 'kind' | 'workflowId'>,
  description: Pick<WorkflowExecutionDescription, 'priority' | 'parentExecution'>,
): string {
  // Temporal reports a key never set as "".
  if (description.priority?.fairnessKey) return description.priority.fairnessKey;
  const parent = description.parentExecution?.workflowId;
  if (found.kind === 'pipeline') return parent ?? found.workflowId;
  return batchFairnessKey(PARTITION_ID.test(found.workflowId) && parent ? parent : found.workflowId);
}
