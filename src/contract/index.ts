/**
 * The service contract: schemas, limits, prices and model metadata. Pure and deterministic, so
 * workflows may import it. The signature rule lives in `./signature` (it needs node:crypto).
 */
export * from './limits';
export * from './uri';
export * from './models';
export * from './model-metadata';
export * from './model-inputs';
export * from './validation';
export * from './pricing';
export * from './resources';
export * from './ledger';
// The event helpers read the resources' types, so they are re-exported here, not from ./resources (no cycle).
export { API_VERSION, EVENT_TYPES, resultFromEvent } from './events';
