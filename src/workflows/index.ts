/** Every workflow of the reelflow worker bundle. */
export * from './definitions';
export { jobWorkflow, eventState, idempotencyKeyFor, ledgerOf } from './job';
export { pipelineWorkflow } from './pipeline';
export { batchWorkflow, itemsToRerun } from './batch';
export * from './job-types';
export * from './pipeline-types';
export * from './batch-types';
export * from './webhook-rendezvous';
