/**
 * The workflows of the reelflow worker bundle, and nothing else: the SDK registers every function
 * this module exports as a workflow type. Signals, queries, ids and types live in their own modules
 * (./definitions, ./*-types).
 *
 * Legacy types (`jobWorkflow`, `webhookRendezvousWorkflow`) stay registered so executions started on
 * the previous code finish here (docs/safe-deploys.md); new pipelines never start them.
 */
export { pipelineWorkflow } from './pipeline';
export { batchWorkflow } from './batch';
export { webhookRouteWorkflow } from './webhook-route';
export { jobWorkflow } from './job';
export { webhookRendezvousWorkflow } from './webhook-rendezvous';
