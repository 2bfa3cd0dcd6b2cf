import { QUERY_NAMES, SIGNAL_NAMES, UPDATE_NAMES } from '../../../src/contract/workflow-messages';
import * as definitions from '../../../src/workflows/definitions';
import * as publicApi from '../../../src/workflows/public';

/**
 * The wire names are pinned: running executions and route-store rows name their handlers by them, so
 * a rename would strand them. The workflows' definitions are built from these names.
 */
describe('workflow message names', () => {
  it('keeps every released name as it was', () => {
    expect(SIGNAL_NAMES).toEqual({
      jobEvent: 'jobEvent',
      preparedJobEvent: 'jobEventWithNextSubmit',
      webhookEvent: 'webhookEvent',
      batchItemDone: 'batchItemDone',
      batchItemWaiting: 'batchItemWaiting',
      batchResumed: 'batchResumed',
      slotGranted: 'slotGranted',
    });
    expect(UPDATE_NAMES).toEqual({
      subscribeRoute: 'subscribeRoute',
      raiseBatchBudget: 'raiseBatchBudget',
      cancelStep: 'cancelStep',
      cancelPipeline: 'cancelPipeline',
      raiseBudget: 'raiseBudget',
      retryStep: 'retryStep',
      resolveAmbiguousStep: 'resolveAmbiguousStep',
      decideApproval: 'decideApproval',
      resumeBatch: 'resumeBatch',
    });
    expect(QUERY_NAMES).toEqual({ pipelineProgress: 'pipelineProgress', batchProgress: 'batchProgress' });
  });

  it('is what the workflows define their signals, updates and queries with', () => {
    expect(definitions.jobEventSignal.name).toBe(SIGNAL_NAMES.jobEvent);
    expect(definitions.preparedJobEventSignal.name).toBe(SIGNAL_NAMES.preparedJobEvent);
    expect(definitions.webhookEventSignal.name).toBe(SIGNAL_NAMES.webhookEvent);
    expect(definitions.batchItemDoneSignal.name).toBe(SIGNAL_NAMES.batchItemDone);
    expect(definitions.subscribeRouteUpdate.name).toBe(UPDATE_NAMES.subscribeRoute);
    expect(definitions.resolveAmbiguousUpdate.name).toBe(UPDATE_NAMES.resolveAmbiguousStep);
    expect(definitions.decideApprovalUpdate.name).toBe(UPDATE_NAMES.decideApproval);
    expect(publicApi.decideApprovalUpdate.name).toBe('decideApproval');
    expect(definitions.pipelineProgressQuery.name).toBe(QUERY_NAMES.pipelineProgress);
    expect(definitions.batchProgressQuery.name).toBe(QUERY_NAMES.batchProgress);
  });

  it("sends the job event as 'jobEvent' under its public name and its deprecated alias", () => {
    expect(publicApi.jobEventSignal.name).toBe('jobEvent');
    expect(publicApi.stepEventSignal).toBe(publicApi.jobEventSignal);
  });
});
