/**
 * The workflows of the reelflow worker bundle, and nothing else: the SDK registers every function
 * this module exports as a workflow type. Signals, queries, ids and types live in their own modules
 * (./definitions, ./*-types).
 */
export { pipelineWorkflow } from './pipeline';
export { batchWorkflow } from './batch';
export { webhookRouteWorkflow } from './webhook-route';
