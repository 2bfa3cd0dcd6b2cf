import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { SIGNAL_NAMES } from '../contract';
import type { SlotSignaller } from './account-slots';

/**
 * Grants reach their runs through `client`: the `slotGranted` signal to the run that asked (named by
 * run id, so a run that closed is `gone` even when the workflow id was reused), its argument the holder.
 */
export function temporalSlotSignaller(client: Client): SlotSignaller {
  return {
    async grant(grant) {
      try {
        await client.workflow.getHandle(grant.workflowId, grant.runId).signal(SIGNAL_NAMES.slotGranted, grant.holder);
        return 'signalled';
      } catch (error) {
        if (error instanceof WorkflowNotFoundError) return 'gone';
        throw error;
      }
    },
    async running(workflowId, runId) {
      try {
        const described = await client.workflow.getHandle(workflowId, runId).describe();
        return described.status.name === 'RUNNING';
      } catch (error) {
        if (error instanceof WorkflowNotFoundError) return false;
        throw error;
      }
    },
  };
}
