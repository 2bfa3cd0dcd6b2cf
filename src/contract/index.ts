/**
 * The service contract: schemas, limits, prices, model metadata and the words the layers share. Code
 * outside src/workflows imports the contract from here; workflows import its plain-data modules by
 * their paths and this barrel as types only (it pulls zod). The signature rule lives in `./signature`
 * (it needs node:crypto), imported by its path.
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
export { API_VERSION, EVENT_TYPES, resultFromEvent, terminalStateOf } from './events';
// The words the layers share (plain data).
export * from './errors';
export * from './failure-types';
export * from './submit-attempts';
export * from './workflow-names';
export * from './workflow-messages';
export * from './route-workflow';
export type * from './prepared-submission';
export type * from './archived-output';
export type * from './event-sink';
